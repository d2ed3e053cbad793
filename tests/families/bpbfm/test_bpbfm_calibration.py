"""Calibration (ECE, reliability table) and BPBFM's posterior intervals of triple
probabilities (issue 24, item 5)."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.datasets import make_bpbfm_data
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink.metrics import expected_calibration_error, reliability_table


def test_ece_of_calibrated_and_miscalibrated_predictions():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200_000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    assert expected_calibration_error(y, p) < 0.01
    # squaring the probabilities makes them too low: the gap of a bin at p is p - p^2
    ece = expected_calibration_error(y, p ** 2)
    assert ece == pytest.approx(np.mean(p - p ** 2), abs=0.01)   # 1/6
    table = reliability_table(y, p, n_bins=5)
    assert table["count"].sum() == p.size and len(table) == 5
    assert np.all(table["gap"] < 0.01)


@pytest.mark.parametrize("y, p, message", [
    ([0, 1], [0.5], "2 entries, proba 1"),
    ([0, 2], [0.5, 0.5], "0/1 outcomes"),
    ([0, 1], [0.5, 1.5], "probabilities in"),
    ([], [], "no predictions"),
])
def test_calibration_errors_are_one_line(y, p, message):
    with pytest.raises(ValueError, match=message):
        expected_calibration_error(y, p)


@pytest.fixture(scope="module")
def fitted():
    data = make_bpbfm_data(n_entities=30, n_relations=3, n_topics=3, random_state=0)
    tensor = data[0] if isinstance(data, tuple) else data
    model = BilinearPoissonFactorModel(5, max_iter=60, burn_in=30, thinning=2,
                                       random_state=0).fit(tensor)
    return model


def test_interval_brackets_the_posterior_mean(fitted):
    rng = np.random.default_rng(1)
    h, t = rng.integers(0, 30, 50), rng.integers(0, 30, 50)
    r = rng.integers(0, 3, 50)
    mean, lo, hi = fitted.proba_interval(h, r, t, level=0.9)
    np.testing.assert_allclose(mean, fitted.predict_proba(h, r, t), rtol=1e-12)
    assert np.all(lo <= mean + 1e-12) and np.all(mean <= hi + 1e-12)
    assert np.all((lo >= 0) & (hi <= 1)) and np.any(hi - lo > 0)
    _, lo50, hi50 = fitted.proba_interval(h, r, t, level=0.5)
    assert np.all(hi50 - lo50 <= hi - lo + 1e-12)
    names = fitted.entity_names_
    by_name = fitted.proba_interval(names[h[:3]], fitted.relation_names_[r[:3]],
                                    names[t[:3]])
    np.testing.assert_allclose(by_name[1], lo[:3])


def test_interval_errors(fitted):
    with pytest.raises(ValueError, match="level must be in"):
        fitted.proba_interval([0], [0], [1], level=1.0)
    with pytest.raises(Exception, match="unknown tail|not in"):
        fitted.proba_interval([0], [0], [999])
