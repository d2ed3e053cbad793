"""Document folds with link removal, and held-out tensor entries."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.sparse as sp

from topiclink.data.checks import DataError
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.data.splits import (
    Fold,
    holdout_tensor_entries,
    kfold_documents,
    train_test_split_documents,
)
from topiclink.data.tensor import RelationalTensor

N_DOCS = 43


def _corpus(n_docs: int = N_DOCS, n_words: int = 20, seed: int = 0) -> Corpus:
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.7, size=(n_docs, n_words))
    X[:, 0] += 1  # no empty document
    return Corpus(sp.csr_matrix(X), doc_ids=np.array([f"d{i}" for i in range(n_docs)]))


def _links(n_docs: int = N_DOCS, n: int = 150, directed: bool = True, seed: int = 1) -> Links:
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, n_docs, size=(n, 2))
    # a few reciprocal pairs so the directed accounting sees both orientations
    pairs = np.vstack([pairs, pairs[:10, ::-1]])
    return Links.from_pairs(pairs, n_docs, directed=directed, self_links="drop",
                            duplicates="drop")


def _pair_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for a, b in pairs}


def _account(fold: Fold, links: Links) -> None:
    """Every original link is exactly one of: train, test-train, test-test."""
    tr, te = fold.train_index, fold.test_index
    original = _pair_set(links.pairs)
    train = _pair_set(np.column_stack([tr[fold.train_links.source],
                                       tr[fold.train_links.target]]))
    tt = _pair_set(np.column_stack([te[fold.test_test_links.source],
                                    te[fold.test_test_links.target]]))
    if links.directed:
        i, j = fold.test_out.nonzero()
        out = _pair_set(np.column_stack([te[i], tr[j]]))          # test cites train
        i, j = fold.test_in.nonzero()
        inn = _pair_set(np.column_stack([tr[j], te[i]]))          # train cites test
        test = out | inn
        assert not out & inn
        assert len(test) == fold.test_out.nnz + fold.test_in.nnz == fold.n_test_links
        union = (fold.test_out.astype(int) + fold.test_in.astype(int)) > 0
        assert (union != fold.test_links).nnz == 0
    else:
        assert fold.test_out is None and fold.test_in is None
        i, j = fold.test_links.nonzero()
        test = _pair_set(np.sort(np.column_stack([te[i], tr[j]]), axis=1))
        assert len(test) == fold.test_links.nnz == fold.n_test_links
    assert not train & test and not train & tt and not test & tt
    assert train | test | tt == original
    assert len(train) + len(test) + len(tt) == links.n_links
    assert fold.n_removed_links == len(test) + len(tt) == links.n_links - len(train)
    # training links never touch a test document
    touched = np.unique(np.concatenate([tr[fold.train_links.source],
                                        tr[fold.train_links.target]]))
    assert not np.isin(touched, te).any()


@pytest.mark.parametrize("directed", [True, False])
def test_kfold_partitions_documents_and_links(directed: bool) -> None:
    corpus, links = _corpus(), _links(directed=directed)
    folds = kfold_documents(corpus, links, n_folds=5, random_state=3)
    assert isinstance(folds, list) and len(folds) == 5
    all_test = np.concatenate([f.test_index for f in folds])
    assert np.array_equal(np.sort(all_test), np.arange(N_DOCS))   # each doc tested once
    sizes = sorted(f.n_test for f in folds)
    assert sizes[-1] - sizes[0] <= 1
    for k, f in enumerate(folds):
        assert f.fold == k and f.n_folds == 5
        assert np.array_equal(np.sort(np.concatenate([f.train_index, f.test_index])),
                              np.arange(N_DOCS))
        assert np.all(np.diff(f.train_index) > 0) and np.all(np.diff(f.test_index) > 0)
        assert np.array_equal(f.train_corpus.doc_ids, corpus.doc_ids[f.train_index])
        assert (f.test_corpus.counts != corpus.counts[f.test_index]).nnz == 0
        assert f.train_links.n_docs == f.n_train and f.train_links.directed == directed
        assert f.test_links.shape == (f.n_test, f.n_train) and f.test_links.dtype == bool
        _account(f, links)
    assert sum(f.n_test_links + f.test_test_links.n_links for f in folds) >= links.n_links


def test_directed_orientation_is_kept() -> None:
    # links 0 -> 1, 2 -> 3, 4 -> 5 only
    corpus = _corpus(n_docs=6)
    links = Links.from_pairs([[0, 1], [2, 3], [4, 5]], 6, directed=True)
    f = kfold_documents(corpus, links, n_folds=3, shuffle=False)[0]
    assert np.array_equal(f.test_index, [0, 1])  # contiguous blocks: 0 -> 1 is test-test
    assert f.test_test_links.n_links == 1 and f.n_test_links == 0
    assert f.train_links.pairs.tolist() == [[0, 1], [2, 3]]  # 2 -> 3, 4 -> 5 re-indexed
    seen = set()
    for seed in range(40):
        fold = train_test_split_documents(corpus, links, test_size=2, random_state=seed)
        _account(fold, links)
        te, tr = fold.test_index, fold.train_index
        for s, t in [(0, 1), (2, 3), (4, 5)]:
            if s in te and t in tr:      # the test document cites a training document
                i, j = np.searchsorted(te, s), np.searchsorted(tr, t)
                assert fold.test_out[i, j] and not fold.test_in[i, j]
                seen.add("out")
            if t in te and s in tr:      # a training document cites the test document
                i, j = np.searchsorted(te, t), np.searchsorted(tr, s)
                assert fold.test_in[i, j] and not fold.test_out[i, j]
                seen.add("in")
    assert seen == {"out", "in"}


def test_same_seed_same_folds_other_seed_differs() -> None:
    corpus, links = _corpus(), _links()
    a = kfold_documents(corpus, links, n_folds=4, random_state=11)
    b = kfold_documents(corpus, links, n_folds=4, random_state=11)
    c = kfold_documents(corpus, links, n_folds=4, random_state=12)
    for fa, fb in zip(a, b, strict=True):
        assert np.array_equal(fa.test_index, fb.test_index)
        assert np.array_equal(fa.train_links.pairs, fb.train_links.pairs)
        assert (fa.test_links != fb.test_links).nnz == 0
    assert any(not np.array_equal(fa.test_index, fc.test_index)
               for fa, fc in zip(a, c, strict=True))
    g1 = np.random.default_rng(5)
    g2 = np.random.default_rng(5)
    assert np.array_equal(kfold_documents(corpus, n_folds=3, random_state=g1)[0].test_index,
                          kfold_documents(corpus, n_folds=3, random_state=g2)[0].test_index)


def test_shuffle_false_gives_contiguous_blocks() -> None:
    folds = kfold_documents(_corpus(n_docs=10), n_folds=3, shuffle=False)
    assert [f.test_index.tolist() for f in folds] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]


def test_without_links() -> None:
    fold = kfold_documents(_corpus(), n_folds=2, random_state=0)[1]
    assert fold.train_links is None and fold.test_links is None
    assert fold.n_removed_links == 0 and fold.n_test_links == 0


def test_links_as_array_and_logging(caplog: pytest.LogCaptureFixture) -> None:
    corpus, links = _corpus(), _links()
    with caplog.at_level(logging.INFO, logger="topiclink.data.splits"):
        f = kfold_documents(corpus, links.pairs, n_folds=3, random_state=0)[0]
    assert f.train_links.directed
    assert f"{f.n_removed_links} of {links.n_links} links removed" in caplog.text


@pytest.mark.parametrize("n_folds", [1, 0, N_DOCS + 1, 2.5, True, "3"])
def test_n_folds_errors(n_folds: object) -> None:
    with pytest.raises(ValueError, match="n_folds"):
        kfold_documents(_corpus(), n_folds=n_folds)  # type: ignore[arg-type]


def test_n_folds_equal_to_n_docs_is_leave_one_out() -> None:
    folds = kfold_documents(_corpus(n_docs=5), n_folds=5, random_state=0)
    assert sorted(int(f.test_index[0]) for f in folds) == list(range(5))


def test_links_over_other_documents_raise() -> None:
    with pytest.raises(DataError, match="links cover 10 documents"):
        kfold_documents(_corpus(), _links(n_docs=10), n_folds=3)


def test_train_test_split_sizes_and_errors() -> None:
    corpus, links = _corpus(), _links(directed=False)
    fold = train_test_split_documents(corpus, links, test_size=0.2, random_state=0)
    assert fold.n_test == int(np.ceil(0.2 * N_DOCS)) and fold.n_train == N_DOCS - fold.n_test
    assert fold.fold == 0 and fold.n_folds == 1
    _account(fold, links)
    again = train_test_split_documents(corpus, links, test_size=0.2, random_state=0)
    assert np.array_equal(fold.test_index, again.test_index)
    for bad in (0.0, 1.0, -0.1, 0, N_DOCS, "a"):
        with pytest.raises(ValueError, match="test_size"):
            train_test_split_documents(corpus, test_size=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- tensors
def _tensor(seed: int = 0, E: int = 12, R: int = 3, density: float = 0.3) -> RelationalTensor:
    rng = np.random.default_rng(seed)
    Y = (rng.random((E, E, R)) < density) * rng.integers(1, 4, size=(E, E, R))
    h, t, r = np.nonzero(Y)
    return RelationalTensor(h, r, t, Y[h, t, r], E, R,
                            missing=np.array([[0, 0, 1], [2, 1, 3], [5, 1, 5]]))


def test_holdout_tensor_entries() -> None:
    T = _tensor()
    Y, observed = T.to_dense()
    E, _, R = T.shape
    n_obs = int(observed.sum())
    train, entries, values = holdout_tensor_entries(T, 0.25, random_state=4)
    m = round(0.25 * n_obs)
    assert entries.shape == (m, 3) and values.shape == (m,)
    h, r, t = entries.T
    assert (h >= 0).all() and (h < E).all() and (t < E).all() and (r < R).all()
    assert len({tuple(e) for e in entries.tolist()}) == m                 # distinct
    assert observed[h, t, r].all()                                        # never missing
    assert np.array_equal(values, Y[h, t, r])
    # both ones and zeros are held out, roughly in proportion (fraction of nonzero cells
    # among the observed ones; binomial, 5 standard deviations)
    share = (Y[observed] > 0).mean()
    assert abs((values > 0).mean() - share) < 5 * np.sqrt(share * (1 - share) / m)
    Y2, observed2 = train.to_dense()
    assert not observed2[h, t, r].any()
    assert observed2.sum() == n_obs - m
    assert np.array_equal(Y2[observed2], Y[observed2])
    assert train.n_entries == T.n_entries - int((values > 0).sum())
    # same seed, same entries; another seed, others
    _, e2, _ = holdout_tensor_entries(T, 0.25, random_state=4)
    _, e3, _ = holdout_tensor_entries(T, 0.25, random_state=5)
    assert np.array_equal(entries, e2) and not np.array_equal(entries, e3)


def test_holdout_tensor_entries_is_uniform_over_cells() -> None:
    # every observed cell is chosen with probability m / n_obs: pool 300 draws and compare
    # each cell's count with its binomial mean (a chi-square-like sum, 5 sd)
    T = _tensor(E=6, R=2)
    _, observed = T.to_dense()
    n_obs = int(observed.sum())
    hits = np.zeros(T.shape)
    reps = 300
    for seed in range(reps):
        _, e, _ = holdout_tensor_entries(T, 0.1, random_state=seed)
        hits[e[:, 0], e[:, 2], e[:, 1]] += 1
    assert hits[~observed].sum() == 0
    m = round(0.1 * n_obs)
    p = m / n_obs
    mean = reps * p
    # without-replacement sampling: var per cell = reps * p (1 - p) exactly
    chi2 = ((hits[observed] - mean) ** 2 / (reps * p * (1 - p))).sum()
    # each term has mean exactly 1; the sum has variance about 2 n_obs
    assert abs(chi2 - n_obs) < 5 * np.sqrt(2 * n_obs)


def test_holdout_tensor_entries_errors() -> None:
    T = _tensor()
    for bad in (0, 1, 1.5, -0.2, "x"):
        with pytest.raises(ValueError, match="fraction"):
            holdout_tensor_entries(T, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no entry"):
        holdout_tensor_entries(T, 1e-6)


def test_drop_empty_documents_keeps_links_consistent(caplog):
    import scipy.sparse as sp

    from topiclink.data import Corpus, Links
    from topiclink.data.clean import drop_empty_documents

    X = sp.csr_matrix(np.array([[1, 0], [0, 0], [2, 1], [0, 0], [1, 1]]))
    corpus = Corpus(X, doc_ids=np.array(["a", "b", "c", "d", "e"]))
    links = Links.from_pairs([[0, 2], [1, 2], [4, 0], [3, 4]], 5)
    labels = np.array([0, 1, 2, 3, 4])
    with caplog.at_level("INFO", logger="topiclink"):
        c2, l2, y2, kept = drop_empty_documents(corpus, links, labels)
    assert list(c2.doc_ids) == ["a", "c", "e"]
    assert kept.tolist() == [0, 2, 4] and y2.tolist() == [0, 2, 4]
    assert sorted(map(tuple, l2.pairs.tolist())) == [(0, 1), (2, 0)]
    assert "dropped 2 empty documents" in caplog.text
    assert "dropped 2 links" in caplog.text


def test_sample_negatives_dense_request_on_small_graph():
    from topiclink.data import Links

    for directed in (True, False):
        links = Links.from_pairs([[0, 1], [2, 3], [4, 0]], 6, directed=directed)
        neg = links.sample_negatives(ratio=1.0, random_state=0)
        total = 30 if directed else 15
        assert len(neg) == total - 3
        keys = {tuple(p) for p in neg.tolist()}
        assert len(keys) == len(neg)
        assert not keys & {tuple(p) for p in links.pairs.tolist()}
        assert all(a != b for a, b in keys)
        if not directed:
            assert all(a < b for a, b in keys)
