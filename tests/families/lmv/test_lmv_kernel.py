"""Batch LMV's pair kernel (Algorithm 1 step 1) against its plain-NumPy twin."""

from __future__ import annotations

import numpy as np
import pytest

from tests import naive
from topiclink.families.lmv.kernels import pair_fixed_point
from topiclink.families.lmv.pairs import stream_pair_statistics


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def _network(D, K, n_links, seed):
    rng = np.random.default_rng(seed)
    elog_theta = np.log(rng.dirichlet(np.full(K, 0.5), D))
    pairs = set()
    while len(pairs) < n_links:
        d, c = rng.integers(0, D, 2)
        if d != c:
            pairs.add((int(d), int(c)))
    links = np.array(sorted(pairs), np.int64).reshape(-1, 2)
    ptr = np.zeros(D + 1, np.int64)
    np.add.at(ptr, links[:, 0] + 1, 1)
    ptr = np.cumsum(ptr)
    vs_link = np.log(rng.uniform(0.05, 0.9, (K, K)))
    elog_tau = np.log(rng.uniform(0.2, 0.95, D))
    taubar = rng.uniform(0.2, 0.95, D)
    Bbar = rng.uniform(0.05, 0.95, (K, K))
    return links, ptr, dict(elog_theta=elog_theta, vs_link=vs_link, elog_tau=elog_tau,
                            taubar=taubar, Bbar=Bbar)


def _stream(links, ptr, p, **kw):
    return stream_pair_statistics(p["elog_theta"], ptr, links[:, 1], p["vs_link"],
                                  p["elog_tau"], p["taubar"], p["Bbar"], **kw)


def _twin(links, p, **kw):
    return naive.lmv_pair_statistics(p["elog_theta"], links, p["vs_link"], p["elog_tau"],
                                     p["taubar"], p["Bbar"], **kw)


TIMES = np.array([3.0, 1.0, np.nan, 2.0, 5.0, 1.0, 4.0])


@pytest.mark.parametrize("time", [None, TIMES])
@pytest.mark.parametrize("tol", [1e-6, 1e-12])
def test_kernel_equals_naive_twin(time, tol):
    links, ptr, p = _network(7, 3, 12, seed=1)
    got = _stream(links, ptr, p, time=time, tol=tol, n_blocks=3)
    want = _twin(links, p, time=time, tol=tol)
    for key in ("gamma_out", "gamma_in", "S1", "T"):
        np.testing.assert_allclose(got[key], want[key], rtol=0, atol=1e-10, err_msg=key)
    assert got["bound"] == pytest.approx(want["bound"], abs=1e-10)
    assert got["rounds"] == want["rounds"]
    assert got["n_pairs"] == want["n_pairs"]
    topics = [want["topics"][(int(d), int(c))] for d, c in links]
    np.testing.assert_array_equal(got["citation_topics"], np.array(topics, np.int32))


def test_time_mask_skips_only_newer_non_links():
    links, ptr, p = _network(7, 3, 12, seed=1)
    got = _stream(links, ptr, p, time=TIMES)
    y = np.zeros((7, 7), bool)
    y[links[:, 0], links[:, 1]] = True
    masked = sum(1 for d in range(7) for c in range(7)
                 if d != c and not y[d, c] and TIMES[c] > TIMES[d])
    assert masked > 0
    assert got["n_pairs"] == 7 * 6 - masked
    assert _stream(links, ptr, p)["n_pairs"] == 7 * 6


def test_thread_count_is_bit_identical():
    links, ptr, p = _network(90, 5, 300, seed=2)
    times = np.random.default_rng(3).uniform(0, 10, 90)
    runs = [_stream(links, ptr, p, time=times, n_threads=n) for n in (1, 2, 3)]
    for other in runs[1:]:
        for key in ("gamma_out", "gamma_in", "S1", "T", "citation_topics"):
            np.testing.assert_array_equal(runs[0][key], other[key], err_msg=key)
        assert runs[0]["bound"] == other["bound"]
        assert runs[0]["rounds"] == other["rounds"]


def test_block_count_changes_only_rounding():
    links, ptr, p = _network(40, 4, 100, seed=4)
    a = _stream(links, ptr, p, n_blocks=1)
    b = _stream(links, ptr, p, n_blocks=7, n_threads=2)
    for key in ("gamma_out", "gamma_in", "S1", "T"):
        np.testing.assert_allclose(a[key], b[key], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(a["T"], b["T"])  # rows summed in citing order either way


def test_pair_is_a_fixed_point():
    links, ptr, p = _network(7, 3, 12, seed=5)
    et = p["elog_theta"]
    for vs in (np.log1p(-p["taubar"][2] * p["Bbar"]), p["vs_link"] + p["elog_tau"][2]):
        kappa, nu, rounds, bound = pair_fixed_point(et[0], et[2], vs, 1e-14, 500)
        assert rounds < 500
        np.testing.assert_allclose(kappa, _softmax(et[0] + vs @ nu), atol=1e-12)
        np.testing.assert_allclose(nu, _softmax(et[2] + kappa @ vs), atol=1e-15)
        direct = (kappa @ vs @ nu + kappa @ (et[0] - np.log(kappa))
                  + nu @ (et[2] - np.log(nu)))
        assert bound == pytest.approx(direct, abs=1e-12)
    # every pair of the twin too (same stopping rule as the kernel)
    want = _twin(links, p, tol=1e-14, max_inner=500)
    y = np.zeros((7, 7), bool)
    y[links[:, 0], links[:, 1]] = True
    for d in range(7):
        for c in range(7):
            if d == c:
                continue
            vs = (p["vs_link"] + p["elog_tau"][c]) if y[d, c] else \
                np.log1p(-p["taubar"][c] * p["Bbar"])
            kappa, nu = want["kappa"][d, c], want["nu"][d, c]
            np.testing.assert_allclose(kappa, _softmax(et[d] + vs @ nu), atol=1e-12)
            np.testing.assert_allclose(nu, _softmax(et[c] + kappa @ vs), atol=1e-12)


@pytest.mark.parametrize("time", [None, TIMES])
def test_totals_count_pairs_links_and_non_links(time):
    links, ptr, p = _network(7, 3, 12, seed=6)
    got = _stream(links, ptr, p, time=time)
    n = got["n_pairs"]
    assert got["gamma_out"].sum() + got["gamma_in"].sum() == pytest.approx(2 * n, abs=1e-10)
    assert got["gamma_out"].sum() == pytest.approx(n, abs=1e-10)
    assert got["S1"].sum() == pytest.approx(len(links), abs=1e-10)
    assert got["T"].sum() == pytest.approx(n - len(links), abs=1e-10)
    # per cited document: T[d'] sums to its counted non-links, gamma_in to all its pairs
    y = np.zeros((7, 7), bool)
    y[links[:, 0], links[:, 1]] = True
    t = np.full(7, np.nan) if time is None else time
    for c in range(7):
        kept = [d for d in range(7) if d != c and (y[d, c] or not t[c] > t[d])]
        assert got["gamma_in"][c].sum() == pytest.approx(len(kept), abs=1e-10)
        assert got["T"][c].sum() == pytest.approx(len(kept) - y[:, c].sum(), abs=1e-10)


def test_no_links_and_self_links():
    D, K = 5, 2
    et = np.log(np.random.default_rng(7).dirichlet(np.ones(K), D))
    args = (np.zeros((K, K)) - 1.0, np.zeros(D), np.full(D, 0.5), np.full((K, K), 0.3))
    got = stream_pair_statistics(et, np.zeros(D + 1, np.int64), np.zeros(0, np.int64), *args)
    assert got["S1"].sum() == 0.0 and got["n_pairs"] == D * (D - 1)
    assert got["citation_topics"].shape == (0, 2)
    ptr = np.array([0, 2, 2, 2, 2, 2], np.int64)  # 0 -> 0 (ignored), 0 -> 3
    got = stream_pair_statistics(et, ptr, np.array([0, 3], np.int64), *args)
    assert got["S1"].sum() == pytest.approx(1.0)
    assert tuple(got["citation_topics"][0]) == (-1, -1)
    assert got["citation_topics"][1].min() >= 0
