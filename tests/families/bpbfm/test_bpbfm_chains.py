"""``n_chains``: independent chains (``BilinearPoissonFactorModel``, Gibbs) or restarts
(``BilinearPoissonFactorModelEM``) whose kept samples are pooled, so that prediction
averages over all of them (on UMLS, 8 EM restarts raised the test filtered MRR from 0.870
to 0.919)."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink import BilinearPoissonFactorModel, BilinearPoissonFactorModelEM, load
from topiclink.datasets import make_bpbfm_data
from topiclink.families.bpbfm.estimator_base import chain_seed


@pytest.fixture(scope="module")
def tensor():
    t, _ = make_bpbfm_data(40, 4, 3, random_state=3, density=0.08)
    return t


GIBBS = dict(n_topics=3, max_iter=30, burn_in=10, thinning=5, max_samples=10,
             evaluate_every=0)
EM = dict(n_topics=3, max_iter=30)
MODELS = {"gibbs": (BilinearPoissonFactorModel, GIBBS),
          "em": (BilinearPoissonFactorModelEM, EM)}


def _single(kw, seed, tensor, cls=BilinearPoissonFactorModel):
    return cls(**kw, random_state=seed).fit(tensor)


@pytest.mark.parametrize("name", list(MODELS))
def test_chains_pool_the_single_chains_samples(name, tensor):
    """Chain 0 is the single-chain fit of random_state; chain c that of chain_seed(seed,
    c); the pooled samples are theirs, in chain order, bit for bit (same process)."""
    cls, kw = MODELS[name]
    pooled = cls(**kw, n_chains=3, random_state=7).fit(tensor)
    chains = [_single(kw, 7, tensor, cls)] + [_single(kw, chain_seed(7, c), tensor, cls)
                                              for c in (1, 2)]
    np.testing.assert_array_equal(pooled.embedding_, chains[0].embedding_)
    for name in ("samples_embedding_", "samples_relation_matrices_"):
        np.testing.assert_array_equal(
            getattr(pooled, name), np.concatenate([getattr(m, name) for m in chains]))
    per_chain = chains[0].samples_embedding_.shape[0]
    assert pooled.samples_embedding_.shape[0] == 3 * per_chain
    # the scores average over every sample, i.e. over the chains (equal sample counts)
    h, r = np.array([0, 5, 9]), np.array([0, 1, 3])
    want = np.mean([m.score_tails_batch(h, r) for m in chains], axis=0)
    np.testing.assert_allclose(pooled.score_tails_batch(h, r), want, rtol=1e-12)
    t = np.array([1, 2, 3])
    want = np.mean([m.predict_proba(h, r, t) for m in chains], axis=0)
    np.testing.assert_allclose(pooled.predict_proba(h, r, t), want, rtol=1e-12)


def test_one_chain_is_the_default_fit(tensor):
    a = _single(GIBBS, 4, tensor)
    b = BilinearPoissonFactorModel(**GIBBS, n_chains=1, random_state=4).fit(tensor)
    np.testing.assert_array_equal(a.samples_embedding_, b.samples_embedding_)


def test_chain_seeds_are_distinct_and_reproducible():
    seeds = [chain_seed(7, c) for c in range(1, 6)]
    assert len(set(seeds)) == 5 and all(0 <= s < 2**63 for s in seeds)
    assert seeds == [chain_seed(7, c) for c in range(1, 6)]
    assert chain_seed(8, 1) != chain_seed(7, 1)
    assert chain_seed(np.random.SeedSequence(7), 1) == chain_seed(7, 1)


def test_pooled_model_saves_and_loads(tensor, tmp_path):
    m = BilinearPoissonFactorModel(**GIBBS, n_chains=2, random_state=1).fit(tensor)
    back = load(m.save(tmp_path / "chains.npz"))
    assert back.n_chains == 2
    h, r = np.arange(4), np.zeros(4, dtype=int)
    np.testing.assert_array_equal(back.score_tails_batch(h, r), m.score_tails_batch(h, r))
    mean, lo, hi = m.proba_interval(h, r, h + 1)
    np.testing.assert_array_equal(back.proba_interval(h, r, h + 1)[1], lo)
    assert np.all(lo <= mean) and np.all(mean <= hi)


def test_unseeded_chains_are_recorded(tensor):
    """random_state=None: the recorded seed reproduces every chain."""
    m = BilinearPoissonFactorModelEM(**EM, n_chains=2).fit(tensor)
    again = BilinearPoissonFactorModelEM(**EM, n_chains=2,
                                         random_state=m.random_state_).fit(tensor)
    np.testing.assert_array_equal(m.samples_embedding_, again.samples_embedding_)


@pytest.mark.parametrize("kw, call, message", [
    (dict(inference="online"), lambda m, t: m.fit(t), "n_chains > 1 needs inference='batch'"),
    ({}, lambda m, t: m.fit(t, resume=True), "resume=True continues one chain"),
    ({}, lambda m, t: m.fit(t, checkpoint="unused.npz"), "checkpoints keep one chain"),
    (dict(n_chains=0), lambda m, t: m.fit(t), "n_chains")])
def test_refusals_are_one_line(kw, call, message, tensor, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    m = BilinearPoissonFactorModel(**{**dict(n_topics=2, max_iter=2, burn_in=1,
                                             n_chains=2), **kw})
    with pytest.raises(ValueError) as info:
        call(m, tensor)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "unused.npz").exists()
