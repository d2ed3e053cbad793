"""Geweke's joint-distribution test of a Gibbs sampler ("Getting it right", JASA 2004).

A model defines a joint :math:`p(\\theta, x)` of latent variables and data.  Two simulators
target that joint:

* the **marginal-conditional** simulator draws :math:`\\theta \\sim p(\\theta)` and then
  :math:`x \\sim p(x \\mid \\theta)`; its draws are independent;
* the **successive-conditional** simulator alternates the Gibbs kernel under test
  (:math:`\\theta \\mid x`) with a regeneration of the data (:math:`x \\mid \\theta`); it leaves
  the joint invariant only when every conditional of the sampler is right.

For test functions :math:`g(\\theta, x)` the two means must agree.  With the
marginal-conditional standard error from the i.i.d. formula and the successive-conditional
one from batch means (the chain is autocorrelated),

.. math::

    z_g = \\frac{\\bar g_{\\text{MC}} - \\bar g_{\\text{SC}}}
               {\\sqrt{\\mathrm{se}_{\\text{MC}}^2 + \\mathrm{se}_{\\text{SC}}^2}}
    \\;\\approx\\; \\mathcal N(0, 1)

for a correct sampler.  The helpers here compute the :math:`z_g`; choosing the model, the
simulators, the test functions and the threshold (with a multiple-testing correction over
the number of test functions) is the caller's job.

The test needs a proper joint whose prior and data model can be simulated directly.  For
the relational topic models that holds for the logistic loss with ``c = 1`` only: with
``c != 1`` or the hinge loss the link term is an unnormalised pseudo-likelihood
:math:`\\psi(y \\mid \\omega)` (regularised Bayes), and the joint the Gibbs sampler targets
has a :math:`(U, z)` marginal equal to the prior tilted by
:math:`\\prod_{ij} \\sum_y \\psi(y \\mid \\omega_{ij})`, which the marginal-conditional
simulator cannot draw from directly.  ``tests/families/rtm/test_rtm_geweke.py`` and
``tests/families/slda/test_slda_geweke.py`` apply the test to the Gibbs-gRTM and gSLDA samplers:
their
successive-conditional simulators call the production ``step`` (the one ``fit`` runs) and
make only the model-external moves themselves (new words with :func:`redraw_words`, new
labels).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["batch_means_se", "iid_se", "geweke_zscores", "format_zscores",
           "categorical_draws", "empirical_topic_proportions", "redraw_words"]


def _as_series(x: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d series, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: {int(np.count_nonzero(~np.isfinite(arr)))} values are "
                         f"not finite")
    return arr


def iid_se(x: ArrayLike) -> float:
    """Standard error of the mean of independent draws, ``std(x, ddof=1) / sqrt(n)``."""
    arr = _as_series(x, "iid_se")
    if arr.size < 2:
        raise ValueError(f"iid_se: need at least 2 draws, got {arr.size}")
    return float(np.std(arr, ddof=1) / np.sqrt(arr.size))


def batch_means_se(x: ArrayLike, n_batches: int = 50) -> float:
    """Standard error of the mean of an autocorrelated series by non-overlapping batch means.

    The series is cut into ``n_batches`` consecutive batches of ``len(x) // n_batches``
    values (the first ``len(x) % n_batches`` values are dropped); when the batches are long
    compared with the autocorrelation time their means are nearly independent, and

        se = std(batch means, ddof=1) / sqrt(n_batches).

    Parameters
    ----------
    x : array_like, 1-d
        The series (finite values), in chain order.
    n_batches : int, default 50
        Number of batches (>= 2); the estimate has ``n_batches - 1`` degrees of freedom.

    Returns
    -------
    float
        The estimated standard error of ``mean(x)``.
    """
    arr = _as_series(x, "batch_means_se")
    n_batches = int(n_batches)
    if n_batches < 2:
        raise ValueError(f"batch_means_se: n_batches must be >= 2, got {n_batches}")
    size = arr.size // n_batches
    if size < 1:
        raise ValueError(f"batch_means_se: {arr.size} values are too few for "
                         f"{n_batches} batches")
    means = arr[arr.size - size * n_batches:].reshape(n_batches, size).mean(axis=1)
    return float(np.std(means, ddof=1) / np.sqrt(n_batches))


def geweke_zscores(mc: Mapping[str, ArrayLike], sc: Mapping[str, ArrayLike],
                   n_batches: int = 50) -> dict[str, float]:
    """Geweke z-scores of every test function, marginal- against successive-conditional.

    Parameters
    ----------
    mc : mapping name -> 1-d array
        Test-function values at independent draws of the marginal-conditional simulator
        (standard error by the i.i.d. formula, :func:`iid_se`).
    sc : mapping name -> 1-d array
        Values along the successive-conditional chain, in chain order (standard error by
        :func:`batch_means_se` with ``n_batches``).  Must have the same names as ``mc``.
    n_batches : int, default 50

    Returns
    -------
    dict name -> float
        ``(mean_mc - mean_sc) / sqrt(se_mc^2 + se_sc^2)``, in the order of ``mc``.  When
        both standard errors are 0 the score is 0 for equal means and +-inf otherwise.
    """
    if set(mc) != set(sc):
        raise ValueError(f"geweke_zscores: mc and sc name different test functions: "
                         f"{sorted(set(mc) ^ set(sc))}")
    out: dict[str, float] = {}
    for name in mc:
        x_mc = _as_series(mc[name], f"geweke_zscores[{name!r}] (mc)")
        x_sc = _as_series(sc[name], f"geweke_zscores[{name!r}] (sc)")
        diff = float(x_mc.mean() - x_sc.mean())
        se = float(np.hypot(iid_se(x_mc), batch_means_se(x_sc, n_batches)))
        if se > 0:
            out[name] = diff / se
        else:
            out[name] = 0.0 if diff == 0 else float(np.copysign(np.inf, diff))
    return out


def format_zscores(z: Mapping[str, float], threshold: float | None = None) -> str:
    """One line per test function, ``name  z``, flagging ``|z| > threshold`` with ``*``."""
    width = max((len(k) for k in z), default=0)
    lines = []
    for name, value in z.items():
        flag = " *" if threshold is not None and abs(value) > threshold else ""
        lines.append(f"{name:<{width}}  {value:+7.2f}{flag}")
    return "\n".join(lines)


def categorical_draws(rng: np.random.Generator, prob: np.ndarray) -> np.ndarray:
    """One categorical draw per row of ``prob`` (..., n) by inverting the cumulative sum
    (rows need not be normalised); used by forward simulators of topic models."""
    cdf = np.cumsum(prob, axis=-1)
    u = rng.random(prob.shape[:-1] + (1,)) * cdf[..., -1:]
    return (u > cdf[..., :-1]).sum(axis=-1)


def empirical_topic_proportions(z: np.ndarray, offsets: np.ndarray,
                                n_topics: int) -> np.ndarray:
    """(R, N) topic assignments of documents ``offsets[d]:offsets[d+1]`` ->
    (R, D, K) empirical proportions zbar (documents must be non-empty)."""
    lengths = np.diff(offsets).astype(np.float64)
    counts = np.stack([np.add.reduceat((z == k).astype(np.float64), offsets[:-1], axis=1)
                       for k in range(n_topics)], axis=-1)
    return counts / lengths[None, :, None]


def redraw_words(rng: np.random.Generator, z: np.ndarray, words: np.ndarray,
                 nwk: np.ndarray, beta: float) -> None:
    """The words' move of a collapsed topic model's successive-conditional simulator.

    An exact draw from p(w | z) with the topics integrated out: phi_k ~ Dir(beta) afresh
    for each of the K = ``nwk.shape[1]`` topics, then w_n ~ phi_{z_n} over the V =
    ``nwk.shape[0]`` words.  (w enters the joint only through p(w | z), so the move leaves
    the joint invariant.)  ``words`` (N,) is overwritten and the word-topic counts ``nwk``
    (V, K) are rebuilt from (w, z), both **in place**: a sampler's data and state keep
    references to these arrays.
    """
    n_words, n_topics = nwk.shape
    phi = rng.dirichlet(np.full(n_words, float(beta)), size=n_topics)
    words[:] = categorical_draws(rng, phi[z])
    nwk[:] = np.bincount(words * n_topics + z, minlength=n_words * n_topics
                         ).reshape(n_words, n_topics)
