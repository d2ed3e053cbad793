"""BPBFM on count data (``binary=False``): planted recovery, auto-detection of binary
data, non-integer counts, the training log-likelihood trace.

Thresholds (fixed before running, as the binary recovery test of ``test_bpbfm.py``): the
planted counts are ``make_bpbfm_data(60, 6, 3, binary=False, density=0.05)`` (about 1000
counts in all, largest about 8), a random 10% of all cells held out, 400 iterations, 200
burn-in: every true factor matched (Hungarian on cosine) with cosine > 0.9; the matched
relation matrices correlate > 0.9 with the truth and have relative Frobenius error < 0.5;
held-out AUC of "count >= 1" > 0.9 and within 0.05 of the true probabilities' AUC.
Seen when written: cosines >= 0.99, correlation 0.96, error 0.29, AUC 0.95 (truth 0.96).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import roc_auc_score

from topiclink.data.checks import DataError
from topiclink.data.tensor import RelationalTensor
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink.families.bpbfm.synthetic import make_bpbfm_data

from .test_bpbfm import _planted

N, R, K = 60, 6, 3


def _planted_counts(seed: int = 1):
    return _planted(seed, N, R, K, binary=False, with_tensor=True)


def test_planted_recovery_counts():
    tensor, train, truth, (h, r, t), y = _planted_counts()
    assert tensor.values.max() > 1 and (tensor.values == np.round(tensor.values)).all()
    m = BilinearPoissonFactorModel(K, binary=False, max_iter=400, burn_in=200,
                                   random_state=0).fit(train)
    assert m.binary_ is False
    U = m.embedding_
    cos = (U / np.linalg.norm(U, axis=0)).T @ (truth.U / np.linalg.norm(truth.U, axis=0))
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9, cos[rows, cols]
    perm = np.empty(K, int)
    perm[cols] = rows
    L = m.relation_matrices_[:, perm][:, :, perm]
    corr = np.corrcoef(L.ravel(), truth.relation_matrices.ravel())[0, 1]
    assert corr > 0.9, corr
    err = np.linalg.norm(L - truth.relation_matrices) / np.linalg.norm(
        truth.relation_matrices)
    assert err < 0.5, err
    auc = roc_auc_score(y > 0, m.predict_proba(h, r, t))
    best = roc_auc_score(y > 0, truth.proba(h, r, t))
    assert auc > 0.9 and auc > best - 0.05, (auc, best)


def test_binary_auto_detection():
    counts, _ = make_bpbfm_data(20, 2, 2, binary=False, random_state=0, density=0.1)
    ones, _ = make_bpbfm_data(20, 2, 2, binary=True, random_state=0, density=0.1)
    assert counts.values.max() > 1 and (ones.values == 1).all()
    kw = {"max_iter": 3, "burn_in": 1, "random_state": 0}
    assert BilinearPoissonFactorModel(2, **kw).fit(ones).binary_ is True
    assert BilinearPoissonFactorModel(2, **kw).fit(counts).binary_ is False
    # explicit choices win: counts read as ones, ones read as counts of 1
    assert BilinearPoissonFactorModel(2, binary=True, **kw).fit(counts).binary_ is True
    assert BilinearPoissonFactorModel(2, binary=False, **kw).fit(ones).binary_ is False
    # binary=True treats every nonzero count as a one: the same chain as the ones
    as_ones = RelationalTensor(counts.heads, counts.relations, counts.tails,
                               np.ones(counts.n_entries), counts.n_entities,
                               counts.n_relations)
    a = BilinearPoissonFactorModel(2, binary=True, **kw).fit(counts)
    b = BilinearPoissonFactorModel(2, binary=True, **kw).fit(as_ones)
    np.testing.assert_array_equal(a.state_.U, b.state_.U)
    # a tensor whose listed values are all 1 except observed zeros is still binary
    with_zero = RelationalTensor([0, 1, 2], [0, 0, 0], [1, 2, 0], [1.0, 0.0, 1.0], 3, 1)
    assert BilinearPoissonFactorModel(2, **kw).fit(with_zero).binary_ is True


def test_non_integer_counts_one_line_error():
    t = RelationalTensor([0, 1, 2], [0, 0, 0], [1, 2, 0], [1.0, 2.5, 3.0], 3, 1)
    with pytest.raises(DataError, match="not an integer") as info:
        BilinearPoissonFactorModel(2, binary=False, max_iter=2).fit(t)
    msg = str(info.value)
    assert "\n" not in msg and "2.5" in msg and "entry 1" in msg
    # binary=True: only nonzero-ness matters, so a fraction is accepted
    BilinearPoissonFactorModel(2, binary=True, max_iter=2, burn_in=1).fit(t)


def test_non_integer_counts_auto_detected_error():
    t = RelationalTensor([0, 1, 2], [0, 0, 0], [1, 2, 0], [1.0, 2.5, 3.0], 3, 1)
    with pytest.raises(DataError, match="not an integer"):
        BilinearPoissonFactorModel(2, max_iter=2, burn_in=1).fit(t)


def test_count_log_likelihood_increases_from_the_start():
    _, train, *_ = _planted_counts()
    m = BilinearPoissonFactorModel(K, binary=False, max_iter=30, burn_in=10,
                                   evaluate_every=1, random_state=0).fit(train)
    ll = np.asarray(m.trace_["log_likelihood"])
    assert ll.shape == (30,) and np.isfinite(ll).all() and (ll < 0).all()
    # seen: -0.159, -0.154, -0.152, ... -0.138; a few steps go down by < 0.001
    assert ll[0] < ll[4] < ll[14] < ll[29], ll
    assert np.mean(np.diff(ll) > 0) > 2 / 3, np.round(ll, 4)
    assert ll[0] == ll.min()
