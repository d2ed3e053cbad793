"""Numba samplers of the augmentation variables: Polya-Gamma and inverse Gaussian draws
from the kernels' xoshiro256** streams, and the per-iteration draw of every training pair
of the relational models (no Python-level call per chunk of pairs).

Polya-Gamma ``PG(b, z)`` (Polson, Scott & Windle 2013, JASA 108, 1339-1349):

* ``PG(1, z)`` exactly by Devroye's alternating-series method as Polson et al. give it
  (their Algorithm 1; ``PG(1, z) = J*(1, z/2) / 4``).  Proposal on ``(0, t]`` a truncated
  inverse Gaussian ``IG(1/|z/2|, 1)`` and on ``(t, inf)`` a shifted exponential of rate
  ``pi^2/8 + z^2/8``, ``t = 0.64``, mixed with probability
  ``p / (p + q)`` where ``q/p = 4/pi (exp(x0 - Z + log Phi(b_Z)) + exp(x0 + Z + log
  Phi(a_Z)))``, ``Z = |z|/2``, ``x0 = log f + f t``, ``f = pi^2/8 + Z^2/2``,
  ``b_Z = (t Z - 1)/sqrt(t)``, ``a_Z = -(t Z + 1)/sqrt(t)``.  Everything is evaluated in log
  space (``log Phi`` by its asymptotic series far in the left tail), so large ``|z|`` does
  not overflow -- the failure of the ``polyagamma`` package's "devroye" method from
  ``|z| ~ 180`` (see :func:`topiclink.distributions.sample_pg`).  Acceptance by the
  alternating series ``S_n(x) = sum_{i<=n} (-1)^i a_i(x)`` of the density of J*(1, 0),
  ``a_n(x) = pi (n + 1/2) exp(-(n + 1/2)^2 pi^2 x / 2)`` for ``x > t`` and
  ``pi (n + 1/2) (2 / (pi x))^{3/2} exp(-2 (n + 1/2)^2 / x)`` for ``x <= t``.
* integer ``b <= PG_EXACT_MAX_B``: the sum of ``b`` independent ``PG(1, z)`` draws (exact:
  PG(a, z) + PG(b, z) = PG(a + b, z) in law);
* other ``b``: the integer part as above when ``b < PG_EXACT_MAX_B``, and the rest
  (the fractional part, or all of a large ``b``) from the series representation
  ``omega = 1/(2 pi^2) sum_k g_k / ((k - 1/2)^2 + z^2/(4 pi^2))``, ``g_k ~ Gamma(b, 1)``:
  its first ``PG_SERIES_TERMS`` terms drawn exactly and the remainder by a gamma law with
  the remainder's exact mean and variance (closed forms minus the partial sums), as the
  reference's fractional-part sampler does -- the first two moments are exact, only the
  higher moments of a remainder carrying ~0.3% of the mean are approximated.

Inverse Gaussian ``IG(mu, lam)`` by Michael, Schucany & Haas (1976): ``y = N(0, 1)^2``,
``x1 = mu + mu^2 y / (2 lam) - mu / (2 lam) sqrt(4 mu lam y + mu^2 y^2)``, written as
``x1 = mu * 4 r / (1 + sqrt(1 + 4 r))^2`` with ``r = lam / (mu y)`` (the same number
without the cancellation of the textbook form when ``mu y >> lam``); return ``x1`` with
probability ``mu / (mu + x1)``, else ``mu^2 / x1``.

Gamma draws by Marsaglia & Tsang (2000) (``shape < 1``: ``G(a + 1) U^{1/a}``); normal
draws by Marsaglia's polar method.  The reference implementations (``polyagamma`` package, NumPy's
``wald``) stay in :mod:`topiclink.distributions` and are what the tests compare against.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.rng import next_u64, seed_state, splitmix64, uniform

__all__ = ["PG_EXACT_MAX_B", "PG_SERIES_TERMS", "pg_draw", "pg1_draw", "ig_draw",
           "pg_draws", "ig_draws", "hinge_lambda_draws", "augment_pair_chunks",
           "draw_seed", "LOSS_LOGISTIC", "LOSS_HINGE"]

#: integer shapes up to this are drawn as exact sums of PG(1, z) draws
PG_EXACT_MAX_B = 16
#: exact terms of the gamma series for the other shapes
PG_SERIES_TERMS = 64

LOSS_LOGISTIC = 0
LOSS_HINGE = 1

_PI = math.pi
_TRUNC = 0.64
_LOG_4_OVER_PI = math.log(4.0 / math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT2 = math.sqrt(2.0)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_RT = 1.0 / math.sqrt(_TRUNC)
_CHUNK_GAMMA = np.uint64(0xD1B54A32D192ED03)


# ---------------------------------------------------------------------- basic draws
@njit(inline="always")
def _unit_open(state: np.ndarray) -> float:
    """A uniform in (0, 1]."""
    return 1.0 - uniform(state)


@njit(inline="always")
def _exponential(state: np.ndarray) -> float:
    return -math.log(_unit_open(state))


@njit(inline="always")
def _normal(state: np.ndarray) -> float:
    """Marsaglia's polar method (one of the pair)."""
    while True:
        u = 2.0 * uniform(state) - 1.0
        v = 2.0 * uniform(state) - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            return u * math.sqrt(-2.0 * math.log(s) / s)


@njit(cache=True)
def _gamma(shape: float, state: np.ndarray) -> float:
    """Gamma(shape, 1) by Marsaglia & Tsang (2000); shape < 1 via G(a + 1) U^(1/a)."""
    boost = 1.0
    a = shape
    if a < 1.0:
        boost = math.exp(math.log(_unit_open(state)) / a)
        a += 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = _normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = _unit_open(state)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2:
            return d * v * boost
        if math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v * boost


# ---------------------------------------------------------------------- Polya-Gamma
@njit(cache=True)
def _log_ndtr(x: float) -> float:
    """log Phi(x), accurate in the far left tail (asymptotic series below -20)."""
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x / _SQRT2))
    x2 = x * x
    inv = 1.0 / x2
    series = 1.0 - inv + 3.0 * inv * inv - 15.0 * inv * inv * inv
    return -0.5 * x2 - math.log(-x) - _HALF_LOG_2PI + math.log(series)


@njit(cache=True)
def _mass_texpon(Z: float) -> float:
    """Probability of the exponential (right) piece of Devroye's proposal; directly while
    ``exp(f t)`` cannot overflow, in log space beyond."""
    t = _TRUNC
    fz = 0.125 * _PI * _PI + 0.5 * Z * Z
    b = _RT * (t * Z - 1.0)
    a = -_RT * (t * Z + 1.0)
    if Z < 20.0:
        # q/p = 4/pi f exp(f t) (exp(-Z) Phi(b) + exp(Z) Phi(a)), Phi(x) = erfc(-x/sqrt2)/2
        e = math.exp(Z)
        q_over_p = (2.0 / _PI) * fz * math.exp(fz * t) * (
            math.erfc(-b * _INV_SQRT2) / e + math.erfc(-a * _INV_SQRT2) * e)
        return 1.0 / (1.0 + q_over_p)
    x0 = math.log(fz) + fz * t
    xb = x0 - Z + _log_ndtr(b)
    xa = x0 + Z + _log_ndtr(a)
    m = max(xa, xb)
    log_q_over_p = _LOG_4_OVER_PI + m + math.log(math.exp(xb - m) + math.exp(xa - m))
    if log_q_over_p > 700.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(log_q_over_p))


@njit(cache=True)
def _a_coef(n: int, x: float) -> float:
    """The n-th term of the alternating series of the J*(1, 0) density (reference form;
    :func:`pg1_draw` uses the same terms with the x-only factors hoisted)."""
    k = (n + 0.5) * _PI
    if x > _TRUNC:
        return k * math.exp(-0.5 * k * k * x)
    if x > 0.0:
        return math.exp(-1.5 * (math.log(0.5 * _PI) + math.log(x)) + math.log(k)
                        - 2.0 * (n + 0.5) * (n + 0.5) / x)
    return 0.0


@njit(cache=True)
def _truncated_ig(Z: float, state: np.ndarray) -> float:
    """IG(1/Z, 1) truncated to (0, t] (Polson et al.'s two regimes)."""
    t = _TRUNC
    if Z < 1.0 / t:
        # mean beyond t: draws from the truncated inverse-chi-square, accepted w.p.
        # exp(-Z^2 x / 2)
        while True:
            e1 = _exponential(state)
            e2 = _exponential(state)
            while e1 * e1 > 2.0 * e2 / t:
                e1 = _exponential(state)
                e2 = _exponential(state)
            x = 1.0 + e1 * t
            x = t / (x * x)
            if uniform(state) <= math.exp(-0.5 * Z * Z * x):
                return x
    mu = 1.0 / Z
    while True:
        x = ig_draw(mu, 1.0, state)
        if x <= t:
            return x


@njit(cache=True)
def pg1_draw(z: float, state: np.ndarray) -> float:
    """One exact PG(1, z) draw (Devroye's method; see the module docstring)."""
    Z = 0.5 * abs(z)
    fz = 0.125 * _PI * _PI + 0.5 * Z * Z
    mass = _mass_texpon(Z)
    while True:
        if uniform(state) < mass:
            x = _TRUNC + _exponential(state) / fz
        else:
            x = _truncated_ig(Z, state)
        # a_n(x) = pi (n + 1/2) * right: exp(-(n + 1/2)^2 pi^2 x / 2); left:
        # (2 / (pi x))^{3/2} exp(-2 (n + 1/2)^2 / x)
        if x > _TRUNC:
            scale = 1.0
            rate = 0.5 * _PI * _PI * x
        elif x > 0.0:
            scale = 2.0 / (_PI * x)
            scale = scale * math.sqrt(scale)
            rate = 2.0 / x
        else:
            continue
        # a_0 = pi/2 scale e, a_1 = 3 pi/2 scale e^9 with e = exp(-rate / 4)
        e = math.exp(-0.25 * rate)
        e2 = e * e
        e8 = e2 * e2
        e8 = e8 * e8
        s = 0.5 * _PI * scale * e
        y = uniform(state) * s
        n = 0
        while True:
            n += 1
            h = n + 0.5
            if n == 1:
                term = 1.5 * _PI * scale * e8 * e
            else:
                term = h * _PI * scale * math.exp(-h * h * rate)
            if n % 2 == 1:
                s -= term
                if y <= s:
                    return 0.25 * x
            else:
                s += term
                if y > s:
                    break


@njit(cache=True)
def _pg_mean_unit(z: float) -> float:
    """E PG(1, z) = tanh(z/2) / (2 z) (series near 0)."""
    t = 0.5 * abs(z)
    if t < 1e-4:
        t2 = t * t
        return 0.25 * (1.0 - t2 / 3.0 + 2.0 * t2 * t2 / 15.0)
    return 0.25 * math.tanh(t) / t


@njit(cache=True)
def _pg_var_unit(z: float) -> float:
    """Var PG(1, z) = (sinh z - z) / (4 z^3 cosh^2(z/2)) (as :func:`pg_var`)."""
    s = abs(z)
    if s < 1.0:
        s2 = s * s
        series = 0.0
        for k in range(9, 0, -1):  # sum_k s^(2k-2)/(2k+1)!, Horner
            series = series * s2 + 1.0 / math.gamma(2.0 * k + 2.0)
        ch = math.cosh(0.5 * s)
        return 0.25 * series / (ch * ch)
    u = math.exp(-s)
    one_u = 1.0 + u
    return ((1.0 - u * u - 2.0 * s * u) / (one_u * one_u)) / (2.0 * s) / s / s


@njit(cache=True)
def _pg_series(b: float, z: float, state: np.ndarray) -> float:
    """PG(b, z) from the gamma series: PG_SERIES_TERMS exact terms plus a gamma remainder
    with the remainder's exact mean and variance."""
    w = z / (2.0 * _PI)
    w2 = w * w
    head = 0.0
    sum_inv = 0.0
    sum_inv2 = 0.0
    for k in range(1, PG_SERIES_TERMS + 1):
        h = k - 0.5
        d = h * h + w2
        head += _gamma(b, state) / d
        sum_inv += 1.0 / d
        sum_inv2 += 1.0 / (d * d)
    c1 = 1.0 / (2.0 * _PI * _PI)
    head *= c1
    tail_mean = max(b * (_pg_mean_unit(z) - c1 * sum_inv), 1e-300)
    tail_var = max(b * (_pg_var_unit(z) - c1 * c1 * sum_inv2), 1e-300)
    return head + _gamma(tail_mean * tail_mean / tail_var, state) * (tail_var / tail_mean)


@njit(cache=True)
def pg_draw(b: float, z: float, state: np.ndarray) -> float:
    """One PG(b, z) draw, b > 0 (exact for integer b <= PG_EXACT_MAX_B; see the module
    docstring for the others).  NaN for a non-finite or non-positive b or z (never loops
    forever on them)."""
    if not (math.isfinite(z) and math.isfinite(b) and b > 0.0):
        return math.nan
    whole = math.floor(b)
    frac = b - whole
    if frac == 0.0 and whole <= PG_EXACT_MAX_B:
        out = 0.0
        for _ in range(int(whole)):
            out += pg1_draw(z, state)
        return out
    if whole >= PG_EXACT_MAX_B:
        return _pg_series(b, z, state)
    out = 0.0
    for _ in range(int(whole)):
        out += pg1_draw(z, state)
    return out + _pg_series(frac, z, state)


# ---------------------------------------------------------------------- inverse Gaussian
@njit(cache=True)
def ig_draw(mu: float, lam: float, state: np.ndarray) -> float:
    """One IG(mu, lam) draw by Michael, Schucany & Haas (module docstring)."""
    n = _normal(state)
    y = n * n
    if y * mu < 1e-300 * lam:
        x = mu
    else:
        r = lam / (mu * y)
        s = 1.0 + math.sqrt(1.0 + 4.0 * r)
        x = mu * 4.0 * r / (s * s)
    if uniform(state) * (mu + x) <= mu:
        return x
    return mu * mu / x


# ---------------------------------------------------------------------- batch drivers
@njit(cache=True)
def pg_draws(b: np.ndarray, z: np.ndarray, state: np.ndarray) -> np.ndarray:
    """PG(b[i], z[i]) for every i from one stream (``state``: uint64[4], advanced)."""
    out = np.empty(z.shape[0])
    for i in range(z.shape[0]):
        out[i] = pg_draw(b[i], z[i], state)
    return out


@njit(cache=True)
def ig_draws(mu: np.ndarray, lam: np.ndarray, state: np.ndarray) -> np.ndarray:
    """IG(mu[i], lam[i]) for every i from one stream."""
    out = np.empty(mu.shape[0])
    for i in range(mu.shape[0]):
        out[i] = ig_draw(mu[i], lam[i], state)
    return out


@njit(inline="always")
def _hinge_lambda(zeta: float, c: float, eps: float, state: np.ndarray) -> float:
    """lambda with 1/lambda ~ IG(1/(c max(|zeta|, eps)), 1)."""
    return 1.0 / ig_draw(1.0 / (c * max(abs(zeta), eps)), 1.0, state)


@njit(cache=True)
def hinge_lambda_draws(zeta: np.ndarray, c: np.ndarray, eps: float,
                       state: np.ndarray) -> np.ndarray:
    """The hinge augmentation of :func:`sample_hinge_augmentation` from one stream."""
    out = np.empty(zeta.shape[0])
    for i in range(zeta.shape[0]):
        out[i] = _hinge_lambda(zeta[i], c[i], eps, state)
    return out


@njit(cache=True)
def draw_seed(state: np.ndarray) -> np.uint64:
    """64 random bits from ``state`` (uint64[4], advanced): an iteration's base seed."""
    return next_u64(state)


@njit(inline="always")
def _log1pexp(x: float) -> float:
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@njit(cache=True, nogil=True)
def augment_pair_chunks(loss: int, chunk_lo: int, chunk_hi: int, bounds: np.ndarray,
                        base_seed: np.uint64, ndk: np.ndarray, Uz: np.ndarray,
                        source: np.ndarray, target: np.ndarray, inv_length: np.ndarray,
                        y: np.ndarray, c: np.ndarray, hinge_cost: float, eps: float,
                        omega: np.ndarray, a: np.ndarray, b: np.ndarray,
                        loglik: np.ndarray) -> None:
    """Draw the augmentation of the pairs of chunks ``chunk_lo:chunk_hi`` (pairs
    ``bounds[i]:bounds[i + 1]`` of chunk i) in one call; releases the GIL.

    Per pair p = (i, j): ``omega_p = (ndk[i] / N_i) . Uz[j]``; logistic:
    ``lambda_p ~ PG(c_p, omega_p)``, ``a_p = c_p (y_p - 1/2)``, ``b_p = lambda_p``; hinge:
    ``zeta_p = l - ytil_p omega_p``, ``1/lambda_p ~ IG(1/(c_p max(|zeta_p|, eps)), 1)``,
    ``a_p = c_p ytil_p (lambda_p + c_p l) / lambda_p``, ``b_p = c_p^2 / lambda_p``.
    ``loglik[i]`` receives chunk i's summed pseudo log-likelihood (``c (y omega - log(1 +
    e^omega))`` or ``-2 c max(0, zeta)``).  Chunk i's stream is seeded by SplitMix64 from
    ``base_seed + (i + 1) * 0xD1B54A32D192ED03``, so the draws depend on the base seed and
    the chunking only, never on which thread or call runs a chunk.
    """
    K = ndk.shape[1]
    st = np.empty(4, dtype=np.uint64)
    for ch in range(chunk_lo, chunk_hi):
        seed_state(splitmix64(base_seed + np.uint64(ch + 1) * _CHUNK_GAMMA), st)
        total = 0.0
        for p in range(bounds[ch], bounds[ch + 1]):
            i = source[p]
            x = ndk[i]
            u = Uz[target[p]]
            acc = 0.0
            for k in range(K):
                acc += x[k] * u[k]
            w = acc * inv_length[i]
            if not math.isfinite(w):
                raise ValueError("augment_pair_chunks: a pair's discriminant is not finite")
            omega[p] = w
            cp = c[p]
            yp = y[p]
            if loss == LOSS_LOGISTIC:
                a[p] = cp * (yp - 0.5)
                b[p] = pg_draw(cp, w, st)
                total += cp * (yp * w - _log1pexp(w))
            else:
                ytil = 2.0 * yp - 1.0
                zeta = hinge_cost - ytil * w
                lam = _hinge_lambda(zeta, cp, eps, st)
                a[p] = cp * ytil * (lam + cp * hinge_cost) / lam
                b[p] = cp * cp / lam
                total += -2.0 * cp * max(0.0, zeta)
        loglik[ch] = total
