"""BPBFM-1 by MAP-EM (:class:`BilinearPoissonFactorModelEM`; :mod:`topiclink.families.bpbfm.em`).

(a) the log posterior never decreases (and the minorizer step alone never lowers it);
(b) the sparse E-step statistics and exposures equal a dense NumPy computation, with
    the entries grouped by head, by tail or by the smaller side; a step that reuses the
    Lambda statistics of its predecessor's check equals one that recomputes them; the
    fit is the same for 1 and 2 BLAS threads;
(c) planted recovery: held-out AUC-ROC far above a shuffled baseline;
(d) UMLS fold 0 of the paper protocol: the library agrees with
    ``benchmarks/bpbfm_em_probe.py`` (same likelihood, data and start);
(e) save/load and resume; the same seed gives the same arrays;
(f) the one-line refusals; the Gibbs-only parameters and methods are not there.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

import topiclink
from tests.families.bpbfm.test_bpbfm import (
    _planted,  # the planted tensor with 10 % of cells held out
)
from topiclink.data.tensor import RelationalTensor
from topiclink.families.bpbfm import em as em_module
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.families.bpbfm.em import BPBFMEM, EPS, BPBFMEMState
from topiclink.families.bpbfm.estimator_em import BilinearPoissonFactorModelEM

PROBE = Path(__file__).resolve().parents[3] / "benchmarks" / "bpbfm_em_probe.py"


def _em(K: int = 3, **kw) -> BilinearPoissonFactorModelEM:
    return BilinearPoissonFactorModelEM(K, **{"random_state": 0, **kw})


# ---------------------------------------------------------------------- (a) monotone
def test_log_posterior_never_decreases():
    train, *_ = _planted()
    m = _em(4, max_iter=150, tol=0.0).fit(train)
    ll = m.trace_["log_likelihood"]
    assert ll.size == 150 and np.all(np.isfinite(ll))
    assert np.all(np.diff(ll) >= -1e-12 * np.abs(ll[1:])), np.diff(ll).min()
    assert ll[-1] > ll[0] + 0.5


@pytest.mark.parametrize("binary", [True, False])
def test_the_minorizer_step_never_decreases(binary):
    """The fallback U step (maximiser of the quadratic bound of the exposure) from random
    points: the log posterior never goes down (the Jacobi step may)."""
    train, *_ = _planted(binary=binary)
    data = BPBFMData.from_tensor(train, binary)
    alg = BPBFMEM(3, prior_rate=2.0)
    rng = np.random.default_rng(3)
    for _ in range(10):
        U = rng.gamma(0.5, 1.0, (data.n_entities, 3))
        L = rng.gamma(0.5, 2.0, (data.n_relations, 3, 3))
        S, D, before = alg.u_statistics(U, L, data)
        n = U * S + EPS
        c = D / U
        U_mm = 2.0 * n / (alg.b + np.sqrt(alg.b ** 2 + 4.0 * c * n))
        after = alg.log_posterior(U_mm, L, data)
        assert after >= before - 1e-12 * abs(before), (before, after)


# ---------------------------------------------------------------------- (b) sparse = dense
def _small(binary: bool):
    rng = np.random.default_rng(0)
    N, R = 7, 3
    x = (rng.random((R, N, N)) < 0.3) * (1 if binary else rng.integers(1, 4, (R, N, N)))
    r, h, t = np.nonzero(x)
    miss_cells = rng.choice(N * N * R, size=20, replace=False)
    mr, rest = np.divmod(miss_cells, N * N)
    mh, mt = np.divmod(rest, N)
    tensor = RelationalTensor(h, r, t, x[r, h, t].astype(float), N, R,
                              missing=np.stack([mh, mr, mt], 1))
    observed = np.ones((R, N, N))
    observed[mr, mh, mt] = 0
    return tensor, x * observed, observed


@pytest.mark.parametrize("side", [None, "head", "tail"])
@pytest.mark.parametrize("binary", [True, False])
def test_sparse_statistics_equal_the_dense_computation(binary, side, monkeypatch):
    """``side``: the E-step groups every relation's entries by this side (None: per
    relation the side with fewer distinct entities)."""
    monkeypatch.setattr(em_module, "GROUP_SIDE", side)
    tensor, x, observed = _small(binary)
    data = BPBFMData.from_tensor(tensor, binary)
    N, R, K = tensor.n_entities, tensor.n_relations, 4
    alg = BPBFMEM(K, prior_rate=3.0)
    rng = np.random.default_rng(1)
    U, L = rng.gamma(1.0, 1.0, (N, K)), rng.gamma(1.0, 0.3, (R, K, K))
    rate = np.einsum("ik,rkl,jl->rij", U, L, U)
    W = observed * x / (-np.expm1(-rate) if binary else rate)
    S_lam = np.einsum("ik,rij,jl->rkl", U, W, U)
    D_lam = np.einsum("ik,rij,jl->rkl", U, observed, U)
    S_u = (np.einsum("rij,jl,rkl->ik", W, U, L) + np.einsum("rji,jk,rkl->il", W, U, L))
    D_u = (np.einsum("rij,jl,rkl->ik", observed, U, L)
           + np.einsum("rji,jk,rkl->il", observed, U, L))
    if binary:
        ll = np.sum(observed * np.where(x > 0, np.log(-np.expm1(-rate)), -rate))
    else:
        from scipy.special import gammaln
        ll = np.sum(observed * (x * np.log(rate) - rate - gammaln(x + 1)))
    prior = sum(EPS * np.log(a).sum() - 3.0 * a.sum() for a in (U, L))
    n_ones = int(np.sum(x > 0))
    got_S, got_D = alg.lambda_statistics(U, L, data)
    np.testing.assert_allclose(got_S, S_lam, rtol=1e-10)
    np.testing.assert_allclose(got_D, D_lam, rtol=1e-10)
    got_S, got_D, obj = alg.u_statistics(U, L, data)
    np.testing.assert_allclose(got_S, S_u, rtol=1e-10)
    np.testing.assert_allclose(got_D, D_u, rtol=1e-10)
    assert data.n_observed == n_ones
    assert obj == pytest.approx((ll + prior) / n_ones, rel=1e-10)
    assert alg.log_posterior(U, L, data) == pytest.approx(obj, rel=1e-12)


@pytest.mark.parametrize("binary", [True, False])
def test_a_step_reusing_the_checked_statistics_equals_one_recomputing_them(binary):
    """Each step computes Lambda's statistics of the next one together with the check of
    its U step and leaves them in the state's workspace; the next step uses them.  A step
    that finds no such workspace (a new run, a loaded or copied state) recomputes them:
    the chain is the same bit for bit."""
    train, *_ = _planted(binary=binary)
    data = BPBFMData.from_tensor(train, binary)

    def chain(recompute: bool) -> BPBFMEMState:
        alg = BPBFMEM(3, prior_rate=2.0)
        state = alg.init(data, np.random.default_rng(0))
        for _ in range(12):
            if recompute:
                state.workspace = None
            alg.step(state, data)
            state.iteration += 1
        return state

    reused, recomputed = chain(False), chain(True)
    np.testing.assert_array_equal(reused.U, recomputed.U)
    np.testing.assert_array_equal(reused.L, recomputed.L)


def test_the_fit_is_the_same_for_any_number_of_blas_threads():
    """The E-step's products reduce over K or over a block's entries in an order that
    does not depend on the BLAS thread count (OpenBLAS splits the output, not the sum)."""
    from threadpoolctl import threadpool_limits
    train, *_ = _planted(N=80)
    fits = []
    for threads in (1, 2):
        with threadpool_limits(threads):
            fits.append(_em(48, max_iter=8, tol=0.0).fit(train).state_)
    np.testing.assert_array_equal(fits[0].U, fits[1].U)
    np.testing.assert_array_equal(fits[0].L, fits[1].L)


# ---------------------------------------------------------------------- (c) recovery
def test_planted_recovery_beats_a_shuffled_baseline():
    train, truth, (h, r, t), y = _planted(N=80)
    m = _em(3, max_iter=300).fit(train)
    p = m.predict_proba(h, r, t)
    auc = roc_auc_score(y, p)
    shuffled = roc_auc_score(y, np.random.default_rng(0).permutation(p))
    best = roc_auc_score(y, truth.proba(h, r, t))
    assert auc > 0.85 and auc > shuffled + 0.3 and auc > best - 0.1, (auc, shuffled, best)
    assert np.allclose(m.embedding_.sum(axis=0), 1.0)
    assert m.samples_embedding_.shape[0] == 1
    # the published (normalised) arrays give the state's rates
    s = m.state_.U.sum(axis=0)
    np.testing.assert_allclose(m.embedding_ * s, m.state_.U, rtol=1e-12)
    np.testing.assert_allclose(m.score_tails(int(h[0]), int(r[0])),
                               m.predict_proba(np.full(80, h[0]), np.full(80, r[0]),
                                               np.arange(80)), rtol=1e-10)
    assert "MAP-EM" in m.summary()


# ---------------------------------------------------------------------- (d) = the probe
def _probe():
    spec = importlib.util.spec_from_file_location("bpbfm_em_probe", PROBE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_umls_fold0_agrees_with_the_probe():
    from topiclink.datasets import load_dataset
    from topiclink_reproductions.bpbfm import paper_folds, union_tensor

    probe = _probe()
    full = union_tensor(load_dataset("umls").tensor)
    N, R = full.n_entities, full.n_relations
    fold = paper_folds(full, [0])[0]
    e = fold.entries                                   # (head, relation, tail)
    K, iterations, b = 20, 200, 5.0
    m = BilinearPoissonFactorModelEM(K, max_iter=iterations, tol=0.0, prior_rate=b,
                                     random_state=0).fit(fold.train)
    ours = average_precision_score(fold.labels, m.predict_proba(e[:, 0], e[:, 1], e[:, 2]))
    x = probe.dense(fold.train, N, R)
    observed = np.ones_like(x)
    observed[e[:, 1], e[:, 0], e[:, 2]] = 0
    x[e[:, 1], e[:, 0], e[:, 2]] = 0
    rate = probe.fit_em(x, observed, K, True, iterations, b, seed=0)
    theirs = average_precision_score(fold.labels,
                                     -np.expm1(-rate[e[:, 1], e[:, 0], e[:, 2]]))
    assert abs(ours - theirs) < 0.02, (ours, theirs)
    assert ours > 0.88, ours


# ---------------------------------------------------------------------- (e) persistence
def test_save_load_resume_and_determinism(tmp_path):
    train, _, (h, r, t), _ = _planted()
    kw = dict(max_iter=10, tol=0.0)
    whole = _em(3, max_iter=20, tol=0.0).fit(train)
    again = _em(3, max_iter=20, tol=0.0).fit(train)
    for name in ("embedding_", "relation_matrices_"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(again, name))
    np.testing.assert_array_equal(whole.state_.U, again.state_.U)
    np.testing.assert_array_equal(whole.trace_["log_likelihood"],
                                  again.trace_["log_likelihood"])
    part = _em(3, **kw).fit(train)
    path = part.save(tmp_path / "em.npz", full=True)
    loaded = topiclink.load(path)
    assert isinstance(loaded.state_, BPBFMEMState)
    assert isinstance(loaded, BilinearPoissonFactorModelEM)
    np.testing.assert_array_equal(loaded.predict_proba(h, r, t), part.predict_proba(h, r, t))
    np.testing.assert_array_equal(loaded.state_.L, part.state_.L)
    loaded.fit(train, resume=True)
    assert loaded.n_iter_ == 20
    np.testing.assert_array_equal(loaded.state_.U, whole.state_.U)
    np.testing.assert_array_equal(loaded.embedding_, whole.embedding_)
    np.testing.assert_allclose(loaded.trace_["log_likelihood"],
                               whole.trace_["log_likelihood"], rtol=1e-13)
    light = topiclink.load(part.save(tmp_path / "light.npz"))
    np.testing.assert_array_equal(light.predict_proba(h, r, t), part.predict_proba(h, r, t))


def test_tol_stops_early():
    train, *_ = _planted()
    m = _em(3, max_iter=500, tol=1e-4).fit(train)
    assert m.stopped_early_ and m.n_iter_ < 500
    ll = m.trace_["log_likelihood"]
    assert abs(ll[-1] - ll[-2]) <= 1e-4 * abs(ll[-2])


# ---------------------------------------------------------------------- (f) refusals
@pytest.mark.parametrize("kw, match", [
    ({"prior_rate": 0.0}, "prior_rate"),
    ({"tol": -1.0}, "tol"),
])
def test_refusals_are_one_line(kw, match):
    train, *_ = _planted()
    with pytest.raises(ValueError, match=match) as info:
        _em(3, max_iter=2, **kw).fit(train)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["n_dictionary", "executor", "self_pairs", "priors",
                                  "inference", "burn_in", "batch_size"])
def test_the_gibbs_parameters_are_not_the_em_models(name):
    """What EM cannot use is no parameter of it (Python's TypeError), not a refusal."""
    with pytest.raises(TypeError, match=name):
        BilinearPoissonFactorModelEM(3, **{name: None})


def test_a_point_estimate_has_no_stream_and_no_interval():
    train, _, (h, r, t), _ = _planted()
    m = _em(3, max_iter=3).fit(train)
    assert not hasattr(m, "partial_fit") and not hasattr(m, "proba_interval")


def test_paper_name():
    m = topiclink.make_paper_model("BPBFM-1-EM", n_topics=3)
    assert isinstance(m, BilinearPoissonFactorModelEM) and m.n_topics == 3
