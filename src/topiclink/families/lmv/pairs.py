"""Stream batch LMV's pair statistics (Algorithm 1 step 1) over a thread pool.

The cited documents are cut into blocks fixed by D alone (never by ``n_threads``); each
block runs :func:`topiclink.families.lmv.kernels.pair_statistics` (``nogil``) with private
``gamma_out``, ``S1`` and scalar accumulators, which are summed in block order; ``T``,
``gamma_in`` and the citation topics are written by one block per row.  The result is
therefore bit-identical for any ``n_threads``.  At most ``2 n_threads`` blocks are in
flight, so memory stays O(D K^2 + L + n_threads D K).
"""

from __future__ import annotations

import numpy as np

from topiclink.execution import run_blocks_in_order
from topiclink.families.lmv.kernels import pair_statistics

__all__ = ["default_n_blocks", "stream_pair_statistics"]


def default_n_blocks(n_docs: int) -> int:
    """Blocks of cited documents: a function of D only (32, or D when smaller)."""
    return max(1, min(int(n_docs), 32))


def stream_pair_statistics(elog_theta: np.ndarray, link_ptr: np.ndarray,
                           link_dst: np.ndarray, vs_link: np.ndarray, elog_tau: np.ndarray,
                           taubar: np.ndarray, Bbar: np.ndarray, *,
                           time: np.ndarray | None = None, tol: float = 1e-6,
                           max_inner: int = 100, n_threads: int = 1,
                           n_blocks: int | None = None,
                           citation_topics: bool = True,
                           link_nu: np.ndarray | None = None) -> dict:
    """Every ordered pair's (kappa, nu) to convergence; their sufficient statistics.

    Parameters
    ----------
    elog_theta : (D, K)  E log theta.
    link_ptr, link_dst : (D+1,), (L,)  CSR of the directed links by citing document
        (targets sorted within a row).
    vs_link : (K, K)  psi(a) - psi(a + b).
    elog_tau : (D,)  psi(g) - psi(g + h)  (zeros for PLLDA).
    taubar : (D,)  g / (g + h)  (ones for PLLDA);  Bbar : (K, K)  a / (a + b).
    time : (D,) or None  publication times, NaN unknown; a non-link whose cited document is
        newer than the citing one is skipped (LMV(t)).
    tol, max_inner : per pair, stop when no nu entry moves by ``tol``, or after
        ``max_inner`` rounds.
    n_threads : worker threads (results do not depend on it).
    n_blocks : blocks of cited documents (default :func:`default_n_blocks`).
    citation_topics : also return the hard topic pair of every link.
    link_nu : (L, K) or None  every link's nu from the previous iteration (rows of zeros:
        not yet known), updated in place: the links' fixed points start there, so the
        step cannot land on a worse one of their several fixed points (L* stays monotone).
        None: cold starts from softmax(E log theta) for every pair.

    Returns
    -------
    dict with ``gamma_out`` (D, K) sum of kappa over the pairs d cites or could cite,
    ``gamma_in`` (D, K) sum of nu over the pairs citing d, ``S1`` (K, K) links' sum of
    kappa nu^T, ``T`` (D, K, K) non-links' sum of kappa nu^T per cited document,
    ``bound`` the pairs' part of L* (E log p(s) + E log p(r) + E log p(y | ...) + the
    entropies of q(s), q(r)), ``rounds`` total inner rounds, ``n_pairs`` pairs visited,
    ``citation_topics`` (L, 2) int32 (argmax kappa, argmax nu) of each link, or None.
    """
    elog_theta = np.ascontiguousarray(elog_theta, dtype=np.float64)
    D, K = elog_theta.shape
    link_ptr = np.ascontiguousarray(link_ptr, dtype=np.int64)
    link_dst = np.ascontiguousarray(link_dst, dtype=np.int64)
    vs_link = np.ascontiguousarray(vs_link, dtype=np.float64)
    elog_tau = np.ascontiguousarray(elog_tau, dtype=np.float64)
    taubar = np.ascontiguousarray(taubar, dtype=np.float64)
    Bbar = np.ascontiguousarray(Bbar, dtype=np.float64)
    if time is None:
        time = np.full(D, np.nan)
    time = np.ascontiguousarray(time, dtype=np.float64)
    if link_ptr.shape != (D + 1,) or time.shape != (D,) or taubar.shape != (D,) \
            or elog_tau.shape != (D,) or vs_link.shape != (K, K) or Bbar.shape != (K, K):
        raise ValueError("inconsistent shapes in stream_pair_statistics")
    L = link_dst.shape[0]
    n_blocks = default_n_blocks(D) if n_blocks is None else max(1, min(int(n_blocks), D))
    edges = np.linspace(0, D, n_blocks + 1).round().astype(np.int64)

    gamma_in = np.zeros((D, K))
    T = np.zeros((D, K, K))
    topics = np.full((L if citation_topics else 0, 2), -1, np.int32)
    if link_nu is None:
        link_nu = np.zeros((0, K))
    elif link_nu.shape != (L, K) or link_nu.dtype != np.float64 \
            or not link_nu.flags.c_contiguous:
        raise ValueError(f"link_nu must be a C-contiguous float64 ({L}, {K}) array")

    def run_block(b: int):
        g_out = np.zeros((D, K))
        s1 = np.zeros((K, K))
        bound, rounds, n_pairs = pair_statistics(
            elog_theta, link_ptr, link_dst, vs_link, elog_tau, taubar, Bbar, time,
            int(edges[b]), int(edges[b + 1]), float(tol), int(max_inner), g_out, gamma_in,
            s1, T, topics, link_nu)
        return g_out, s1, bound, rounds, n_pairs

    gamma_out = np.zeros((D, K))
    S1 = np.zeros((K, K))
    total = [0.0, 0, 0]

    def merge(result) -> None:
        g_out, s1, bound, rounds, n_pairs = result
        gamma_out[...] += g_out
        S1[...] += s1
        total[0] += bound
        total[1] += rounds
        total[2] += n_pairs

    run_blocks_in_order(run_block, n_blocks, int(n_threads), merge)
    return {"gamma_out": gamma_out, "gamma_in": gamma_in, "S1": S1, "T": T,
            "bound": float(total[0]), "rounds": int(total[1]), "n_pairs": int(total[2]),
            "citation_topics": topics if citation_topics else None}
