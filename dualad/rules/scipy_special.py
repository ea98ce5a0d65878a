"""More scipy.special functions: exponential and Fresnel integrals, entropies, Box-Cox,
hypergeometric functions, Hurwitz zeta, Owen's T, Pochhammer, binomial coefficients.

Ufuncs are declared as in :mod:`dualad.rules.special`: a row of partials written with
primitives, a primitive for each new special function a partial needs, a JAX kernel
for each (``jax.scipy.special``'s by name where JAX has the function, SciPy's on the
host otherwise). The ufuncs with two outputs (``fresnel``, ``sici``) are one
primitive per output. ``comb``, ``factorial`` and ``zeta`` are Python functions,
routed by dispatchers (:func:`dualad.rules.scipy_functions.scipy_rule`).

``zeta`` in ``x`` has no closed form: ∂ᵏζ/∂xᵏ is a primitive of its own (``zeta_dx``,
Euler-Maclaurin on the values, as JAX's), whose partials are again ``zeta_dx``, so
every order works. Derivatives in the parameters of ``hyp1f1``/``hyp2f1`` (``a``,
``b``, ``c``) raise a TypeError. ``gammasgn`` is a step (values only);
``comb``/``factorial`` with ``exact=True`` give integers (values only).

All are declared by :func:`declare` when scipy.special is imported, not with dualad
(see :func:`dualad.rules.special.declare_scipy_rules`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..dual import as_operand, primal_value
from ..primitive import Primitive, register_function
from .elementwise import (absolute, broadcast_shape_rule, cos, elementwise, equal, exp,
                          greater, log, log1p, nondifferentiable, remainder, rint, sin, sqrt,
                          where)
from .scipy_functions import scipy_rule
from .special import _SQRT_2PI, _TWO_OVER_SQRT_PI, _host_kernel, _no_partial, sc, sinc

_PI = math.pi
_TWO_I_OVER_SQRT_PI = 2j / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


# ---------------------------------------------------------------------------
# Asymptotic series for large arguments, where the recurrences of the partials cancel
# (erfcx' = 2x·erfcx - 2/√π, dawsn' = 1 - 2x·dawsn, i0e' = i1e - i0e, φ/Φ of
# log_ndtr': their second derivatives lose ~x² to x⁴ ulps), used by the rules here and
# in :mod:`dualad.rules.special`; the terms left out are below 1e-20 relative from the
# thresholds on.
# ---------------------------------------------------------------------------


def _odd_factorial(n: int) -> int:
    """(2n - 1)!!, 1 for n = 0."""
    return math.prod(range(1, 2 * n, 2))


def _horner(coefficients, u):
    """Σₖ cₖ·uᵏ (coefficients from the constant term up)."""
    total = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        total = total * u + c
    return total


# erfcx(x) ~ Σₙ (-1)ⁿ(2n-1)!!·vⁿ/(x√π), v = 1/(2x²): erfcx'(x) = (2/√π)·v·Σₙ cₙ vⁿ
_ERFCX_FAR = 20.0
_ERFCX_DERIVATIVE = [(-1) ** n * _odd_factorial(n) for n in range(1, 13)]
_DAWSN_DERIVATIVE = [_odd_factorial(n) for n in range(1, 13)]  # (dawsn's, without signs)
# φ(x)/Φ(x) ~ -x/Σₙ (-1)ⁿ(2n-1)!!·x⁻²ⁿ for x → -∞ (the inverse Mills ratio)
_LOG_NDTR_FAR = -20.0
_MILLS = [(-1) ** n * _odd_factorial(n) for n in range(14)]
# e^(-x)·I_ν(x) ~ (2πx)^(-1/2)·Σₖ cₖ x⁻ᵏ, cₖ = Πⱼ≤ₖ ((2j-1)² - 4ν²)/(k!·8ᵏ); its
# derivative (2πx)^(-1/2)·x⁻¹·Σₖ dₖ x⁻ᵏ, dₖ = -(k + ½)·cₖ.
_BESSEL_FAR = 50.0


def _bessel_derivative_coefficients(nu: int, terms: int = 20) -> list:
    c, out = 1.0, []
    for k in range(terms):
        if k:
            c *= ((2 * k - 1) ** 2 - 4 * nu * nu) / (8.0 * k)
        out.append(-(k + 0.5) * c)
    return out


_IE_DERIVATIVE = [_bessel_derivative_coefficients(0), _bessel_derivative_coefficients(1)]


def _ie_derivative(nu: int, x):
    """d/da of e^(-a)·I_ν(a) (ν = 0, 1) at a = |x| > 50, by the asymptotic series."""
    u = 1.0 / where(greater(absolute(x), _BESSEL_FAR), absolute(x), _BESSEL_FAR)
    return sqrt(u / (2.0 * _PI)) * (u * _horner(_IE_DERIVATIVE[nu], u))


def _ive_far(v, x):
    """d/dx of ive(v, x) = e^(-|x|)·I_v(x) for |x| > max(50, 4v²), where its recurrence
    ½(ive(v-1) + ive(v+1)) - ive(v) cancels (~x² ulps in the second derivative): the
    asymptotic series, 20 terms (the ratio of terms is below ¼ there); nan elsewhere
    unused. I_v(-a) = cos(πv)·I_v(a) for integer v (nan otherwise, as SciPy's)."""
    vv = primal_value(v)
    nearest = where(greater(4.0 * (vv * vv), _BESSEL_FAR), 4.0 * (vv * vv), _BESSEL_FAR)
    far = greater(absolute(x), nearest)
    u = 1.0 / where(far, absolute(x), 2.0 * nearest)
    c, series, power = 1.0, -0.5, 1.0
    for k in range(1, 20):
        c = c * (((2 * k - 1) ** 2 - 4.0 * (vv * vv)) / (8.0 * k))
        power = power * u
        series = series - (k + 0.5) * c * power
    turn = where(greater(0.0, x), -cos(_PI * vv), 1.0)
    return far, turn * (sqrt(u / (2.0 * _PI)) * (u * series))


def _dawsn_partial(ans, x):
    # 1 - 2x·F(x); for |x| > 20, where it cancels, -v·Σₙ (2n-1)!!·vⁿ, v = 1/(2x²)
    # (F(x) ~ Σₙ (2n-1)!!·vⁿ/(2x)).
    far = greater(absolute(x), _ERFCX_FAR)
    u = 1.0 / where(far, x, _ERFCX_FAR)
    v = 0.5 * (u * u)
    return where(far, -(v * _horner(_DAWSN_DERIVATIVE, v)), 1.0 - 2.0 * x * ans)


def _wofz_partial(ans, z):
    # -2z·w + 2i/√π, which cancels for large z; for |Re z| > 20 within |Im z| < |Re z|/2
    # (where e^(-z²) is below e^-300) w = e^(-z²) + (2i/√π)·D(z), D Dawson's integral
    # continued, and D' by its asymptotic series (dawsn's).
    zv = primal_value(z)
    far = greater(absolute(zv.real), _ERFCX_FAR) & greater(absolute(zv.real),
                                                          2.0 * absolute(zv.imag))
    zf = where(far, z, _ERFCX_FAR)
    v = 0.5 / (zf * zf)
    series = -(v * _horner(_DAWSN_DERIVATIVE, v))
    return where(far, -2.0 * zf * exp(-(zf * zf)) + _TWO_I_OVER_SQRT_PI * series,
                 -2.0 * z * ans + _TWO_I_OVER_SQRT_PI)


def _erfcx_partial(ans, x):
    # 2x·erfcx - 2/√π, which cancels for large x: there its asymptotic series.
    far = greater(x, _ERFCX_FAR)
    u = 1.0 / where(far, x, _ERFCX_FAR)
    v = 0.5 * (u * u)
    return where(far, _TWO_OVER_SQRT_PI * (v * _horner(_ERFCX_DERIVATIVE, v)),
                 2.0 * x * ans - _TWO_OVER_SQRT_PI)


def _log_ndtr_partial(ans, x):
    # φ(x)/Φ(x) as one exp of a difference (no underflow in the left tail); below -20,
    # where -x²/2 - ans cancels (and its derivative, f'·(-x - f'), too), the series.
    far = greater(_LOG_NDTR_FAR, x)
    xf = where(far, x, _LOG_NDTR_FAR)
    u = 1.0 / xf
    xn, an = where(far, 0.0, x), where(far, 0.0, ans)
    return where(far, -xf / _horner(_MILLS, u * u), exp(-0.5 * (xn * xn) - an) / _SQRT_2PI)


def _psi(x):
    """ψ(x) of real x for the gamma family's partials. SciPy's psi loses digits next to
    its poles 0, -1, -2, … (~1e-16/distance, relative: its πx rounds), so for x < 0
    the reflection ψ(x) = ψ(1 - x) - π·cot(πx), πx taken as nπ + π(x - n) (x - n exact,
    as in rgamma's partial); nan at the poles."""
    from .special import digamma
    negative = greater(0.0, x)
    xn = where(negative, x, -0.5)
    turn = _PI * (xn - rint(xn))
    turn = where(equal(turn, 0.0), np.nan, turn)
    return where(negative, digamma(1.0 - xn) - _PI * cos(turn) / sin(turn),
                 digamma(where(negative, 1.0, x)))


_SPLIT = 134217729.0  # 2²⁷ + 1: Veltkamp's split of a double into two 26-bit halves


def _fresnel_phase(x):
    """x² reduced mod 4, to differentiate sin(πx²/2) and cos(πx²/2): πx²/2 rounded
    loses ulp(x²) of phase (1e-8 at x = 1e4). x² = P + E exactly (Dekker's product of
    the halves of x), each reduced mod 4 as a constant; (x - v)(x + v) carries the
    derivatives (v the value of x). From |x| = 2⁵⁴ on, x is even: x² ≡ 0."""
    v = primal_value(x)
    huge = greater(absolute(v), 2.0 ** 54)
    vs = where(huge, 0.0, v)
    c = _SPLIT * vs
    hi = c - (c - vs)
    lo = vs - hi
    p = vs * vs
    e = ((hi * hi - p) + 2.0 * hi * lo) + lo * lo
    reduced = where(huge, 0.0, remainder(p, 4.0) + remainder(e, 4.0))
    return (x - v) * (x + v) + reduced


def _jsp(name: str, output: int | None = None):
    """The kernel ``jax.scipy.special.<name>`` (one of its outputs), imported on use."""

    def kernel(*args):
        import jax.scipy.special as jsp
        out = getattr(jsp, name)(*args)
        return out if output is None else out[output]

    return kernel


# (u·eᵘ - expm1(u))/u² = Σₖ (k+1)/(k+2)!·uᵏ: Box-Cox's derivative in λ over log(x)², by
# its series for |u| < 0.5 (the difference cancels there; 14 terms leave < 1e-17).
_BOXCOX_SERIES = [(k + 1) / math.factorial(k + 2) for k in range(14)]


def _boxcox_dlambda(lmbda, lx):
    """∂/∂λ of expm1(λ·lx)/λ (log(x)²/2 at λ = 0)."""
    u = lmbda * lx
    near = greater(0.5, absolute(u))
    series = _BOXCOX_SERIES[-1]
    for c in reversed(_BOXCOX_SERIES[:-1]):
        series = series * u + c
    us = where(near, 1.0, u)
    direct = (us * exp(us) - (exp(us) - 1.0)) / (us * us)
    return lx * lx * where(near, series, direct)


# log1p(u)/u = Σₖ (-u)ᵏ/(k+1), for |u| < 0.1 (20 terms leave < 1e-20).
_LOG1P_OVER = [(-1.0) ** k / (k + 1) for k in range(20)]


def _log1p_over(u):
    """log1p(u)/u, 1 at u = 0."""
    near = greater(0.1, absolute(u))
    series = _LOG1P_OVER[-1]
    for c in reversed(_LOG1P_OVER[:-1]):
        series = series * u + c
    us = where(near, 1.0, u)
    return where(near, series, log1p(us) / us)


def _spence_partial(ans, z):
    # log(z)/(1 - z) as -log1p(u)/u, u = z - 1, which keeps its digits next to z = 1;
    # below z = ½ log(z)/(1 - z) itself (1 + u rounds to 0 from z < 1e-16 on: -inf).
    low = greater(0.5, z)
    zl = where(low, z, 0.25)
    return where(low, log(zl) / (1.0 - zl), -_log1p_over(where(low, 1.0, z) - 1.0))


def _series_product(a: list, b: list) -> list:
    """The first len(a) Taylor coefficients of the product of two series."""
    return [sum(a[i] * b[j - i] for i in range(j + 1)) for j in range(len(a))]


_ZETA_TERMS, _ZETA_CORRECTIONS = 24, 12


def _zeta_x_derivative(k, x, q):
    """∂ᵏζ(x, q)/∂xᵏ on arrays by Euler-Maclaurin (Johansson 2015, as JAX's derivative
    of zeta): Σ_{n<N} (n + q)^-x, then the tail's terms as Taylor series in x, to
    order k (Bernoulli corrections to 24 orders; < 1e-15 relative for x > 1, q > 0)."""
    from scipy.special import bernoulli
    k = int(k)
    dtype = np.result_type(*(v if isinstance(v, (float, int)) else np.asarray(v)
                             for v in (x, q)), np.float32)
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    ones, zeros = np.ones(x.shape), np.zeros(x.shape)
    with np.errstate(all="ignore"):
        head = zeros
        for n in range(_ZETA_TERMS):
            log_n = np.log(n + q)
            head = head + (-log_n) ** k * np.exp(-x * log_n)
        a = q + _ZETA_TERMS
        log_a = np.log(a)
        power = [np.exp(-x * log_a) * (-log_a) ** j / math.factorial(j) for j in range(k + 1)]
        # a^(1-x)/(x - 1) + a^-x/2
        tail = [a * c + (0.5 * p) for c, p in zip(
            _series_product(power, [(-1.0) ** j / (x - 1.0) ** (j + 1) for j in range(k + 1)]),
            power)]
        # B₂ⱼ/(2j)!·x(x+1)…(x+2j-2)·a^(-x-2j+1)
        bernoulli_numbers = bernoulli(2 * _ZETA_CORRECTIONS)
        rising = [ones] + [zeros] * k
        for j in range(1, _ZETA_CORRECTIONS + 1):
            for i in ((0,) if j == 1 else (2 * j - 3, 2 * j - 2)):
                rising = _series_product(rising, [x + i, ones] + [zeros] * (k - 1))
            c = float(bernoulli_numbers[2 * j]) / math.factorial(2 * j) * a ** (1 - 2 * j)
            tail = [t + c * r for t, r in zip(tail, _series_product(rising, power))]
        out = head + math.factorial(k) * tail[k]
    return out.astype(dtype)[()]


def declare() -> None:
    """Declare these primitives and dispatchers: run by
    :func:`dualad.rules.special.declare_scipy_rules` once scipy.special is imported."""
    from .special import digamma, erf, gamma

    # Exponential integrals and Dawson's integral
    exp1 = elementwise(sc.exp1, lambda ans, x: -exp(-x) / x)
    expi = elementwise(sc.expi, lambda ans, x: exp(x) / x)
    # E_n' = -E_{n-1}; E_0 = e⁻ˣ/x (SciPy's expn(-1, x) is nan). n is an integer.
    expn = elementwise(sc.expn, None, lambda ans, n, x: where(
        equal(n, 0.0), -ans * (1.0 + 1.0 / x), -expn(n - 1.0, x)))
    dawsn = elementwise(sc.dawsn, _dawsn_partial)
    # SciPy's 10ˣ and 2ˣ (NumPy's exp2 is another ufunc)
    exp10 = elementwise(sc.exp10, lambda ans, x: ans * math.log(10.0))
    scipy_exp2 = elementwise(sc.exp2, lambda ans, x: ans * math.log(2.0))
    # The Faddeeva function (Voigt profiles), holomorphic: w'(z) = -2z·w(z) + 2i/√π
    # (_wofz_partial: for large z its asymptotic series).
    wofz = elementwise(sc.wofz, _wofz_partial)
    wofz.complex_ok = True

    # Fresnel and sine/cosine integrals: one primitive per output.
    fresnel_s = Primitive("fresnel_s", lambda x: sc.fresnel(x)[0],
                          partials=(lambda ans, x: sin(0.5 * _PI * _fresnel_phase(x)),),
                          shape_rule=broadcast_shape_rule)
    fresnel_c = Primitive("fresnel_c", lambda x: sc.fresnel(x)[1],
                          partials=(lambda ans, x: cos(0.5 * _PI * _fresnel_phase(x)),),
                          shape_rule=broadcast_shape_rule)
    # Si' = sin(x)/x = sinc(x/π); Ci' = cos(x)/x.
    sici_si = Primitive("sici_si", lambda x: sc.sici(x)[0],
                        partials=(lambda ans, x: sinc(x / _PI),),
                        shape_rule=broadcast_shape_rule)
    sici_ci = Primitive("sici_ci", lambda x: sc.sici(x)[1],
                        partials=(lambda ans, x: cos(x) / x,), shape_rule=broadcast_shape_rule)
    fresnel_s.kernels["jax"] = _jsp("fresnel", 0)
    fresnel_c.kernels["jax"] = _jsp("fresnel", 1)
    sici_si.kernels["jax"] = _jsp("sici", 0)
    sici_ci.kernels["jax"] = _jsp("sici", 1)
    register_function(sc.fresnel, lambda x: (fresnel_s(x), fresnel_c(x)))
    register_function(sc.sici, lambda x: (sici_si(x), sici_ci(x)))

    # Entropies: -x·log x, x·log(x/y) - x + y, x·log(x/y); infinite partials at x = 0.
    entr = elementwise(sc.entr, lambda ans, x: -(log(x) + 1.0), nonfinite=True)
    kl_div = elementwise(sc.kl_div, lambda ans, x, y: log(x / y),
                         lambda ans, x, y: 1.0 - x / y, nonfinite=True)
    rel_entr = elementwise(sc.rel_entr, lambda ans, x, y: log(x / y) + 1.0,
                           lambda ans, x, y: -x / y, nonfinite=True)

    # Box-Cox: expm1(λ·L)/λ with L = log x (boxcox) or log1p x (boxcox1p).
    boxcox = elementwise(sc.boxcox, lambda ans, x, lmbda: exp((lmbda - 1.0) * log(x)),
                         lambda ans, x, lmbda: _boxcox_dlambda(lmbda, log(x)))
    boxcox1p = elementwise(sc.boxcox1p, lambda ans, x, lmbda: exp((lmbda - 1.0) * log1p(x)),
                           lambda ans, x, lmbda: _boxcox_dlambda(lmbda, log1p(x)))

    # Gamma family
    # Real x > 0: gammaln. Complex z: holomorphic off the negative real axis, whose
    # digamma and polygamma take complex z too (special._complex_polygamma).
    loggamma = elementwise(sc.loggamma, lambda ans, x: digamma(x))
    loggamma.complex_ok = True
    poch = elementwise(sc.poch, lambda ans, z, m: ans * (digamma(z + m) - digamma(z)),
                       lambda ans, z, m: ans * digamma(z + m))
    binom = elementwise(sc.binom, lambda ans, n, k: ans * (digamma(n + 1.0)
                                                           - digamma(n - k + 1.0)),
                        lambda ans, n, k: ans * (digamma(n - k + 1.0) - digamma(k + 1.0)))
    binom.kernels["jax"] = _host_kernel(sc.binom)  # JAX has comb, not binom
    gammasgn = nondifferentiable(sc.gammasgn)

    # spence(z) = ∫₁ᶻ log t/(1 - t) dt: its derivative log(z)/(1 - z) (_spence_partial).
    spence = elementwise(sc.spence, _spence_partial)

    # Owen's T(h, a) = 1/(2π) ∫₀ᵃ exp(-h²(1+t²)/2)/(1+t²) dt.
    owens_t = elementwise(
        sc.owens_t,
        lambda ans, h, a: -0.5 * _INV_SQRT_2PI * exp(-0.5 * (h * h))
        * erf(a * h / math.sqrt(2.0)),
        lambda ans, h, a: exp(-0.5 * (h * h) * (1.0 + a * a)) / (2.0 * _PI * (1.0 + a * a)))

    # Confluent and Gauss hypergeometric functions, in x.
    hyp1f1 = elementwise(sc.hyp1f1, _no_partial("hyp1f1", "a"), _no_partial("hyp1f1", "b"),
                         lambda ans, a, b, x: a / b * hyp1f1(a + 1.0, b + 1.0, x))
    hyp2f1 = elementwise(sc.hyp2f1, _no_partial("hyp2f1", "a"), _no_partial("hyp2f1", "b"),
                         _no_partial("hyp2f1", "c"),
                         lambda ans, a, b, c, x: a * b / c * hyp2f1(a + 1.0, b + 1.0, c + 1.0, x))

    # Hurwitz zeta ζ(x, q) = Σₙ (n + q)^-x: ∂q = -x·ζ(x + 1, q), ∂x by zeta_dx.
    from scipy.special import _ufuncs
    hurwitz_zeta = Primitive("zeta", _ufuncs._zeta,
                             partials=(lambda ans, x, q: zeta_dx(1, x, q),
                                       lambda ans, x, q: -x * hurwitz_zeta(x + 1.0, q)),
                             shape_rule=broadcast_shape_rule)
    hurwitz_zeta.kernels["jax"] = _jsp("zeta")

    def _zeta_dx_dq(ans, k, x, q):  # ∂q ∂ᵏx ζ = ∂ᵏx (-x·ζ(x + 1, q))
        lower = hurwitz_zeta(x + 1.0, q) if k == 1 else zeta_dx(k - 1, x + 1.0, q)
        return -x * zeta_dx(k, x + 1.0, q) - k * lower

    # ∂ᵏζ/∂xᵏ (k ≥ 1 a Python integer): every order, in x and q.
    zeta_dx = Primitive("zeta_dx", lambda k, x, q: _zeta_x_derivative(k, x, q),
                        partials=(None, lambda ans, k, x, q: zeta_dx(k + 1, x, q), _zeta_dx_dq),
                        shape_rule=lambda k, x, q: broadcast_shape_rule(x, q))
    zeta_dx.kernels["jax"] = _host_kernel(zeta_dx.kernels["numpy"])
    def _riemann_zeta_dx(ans, x):
        """ζ'(x): Euler-Maclaurin's for x ≥ -½ (1e-12 relative there); below, that sum
        cancels (its terms grow like n^-x), so the derivative of the reflection
        ζ(x) = F(x)·ζ(1 - x) (0·∞ next to x = 0, where 1 - x rounds to ζ's pole),
        F = 2ˣ·π^(x-1)·sin(πx/2)·Γ(1 - x), written so that no cot(πx/2) appears."""
        negative = greater(-0.5, x)
        xn, xp = where(negative, x, -1.0), where(negative, 2.0, x)
        g = exp(xn * math.log(2.0 * _PI)) / _PI * gamma(1.0 - xn)
        half = 0.5 * _PI * xn
        f = g * sin(half)
        df = g * (sin(half) * (math.log(2.0 * _PI) - digamma(1.0 - xn)) + 0.5 * _PI * cos(half))
        reflected = df * riemann_zeta(1.0 - xn) - f * zeta_dx(1, 1.0 - xn, 1.0)
        return where(negative, reflected, zeta_dx(1, xp, 1.0))

    # Riemann's ζ(x) = ζ(x, 1).
    riemann_zeta = Primitive("riemann_zeta", _ufuncs._riemann_zeta,
                             partials=(_riemann_zeta_dx,), shape_rule=broadcast_shape_rule)
    riemann_zeta.kernels["jax"] = _host_kernel(_ufuncs._riemann_zeta)
    register_function(_ufuncs._riemann_zeta, riemann_zeta)
    register_function(_ufuncs._zeta, hurwitz_zeta)

    @scipy_rule("scipy.special", "zeta")
    def zeta(x: Any, q: Any = None, out: Any = None) -> Any:
        """``scipy.special.zeta``: Hurwitz's ζ(x, q), or Riemann's ζ(x) (q = None)."""
        if out is not None:
            raise TypeError("dualad's scipy.special.zeta does not support out=")
        if q is None:
            return riemann_zeta(as_operand(x))
        return hurwitz_zeta(as_operand(x), as_operand(q))

    @scipy_rule("scipy.special", "comb")
    def comb(N: Any, k: Any, *, exact: bool = False, repetition: bool = False) -> Any:
        """``scipy.special.comb``: binom(N, k) where 0 ≤ k ≤ N, else 0 (exact=True: the
        integer, values only)."""
        if exact:
            from scipy.special import _basic
            return _basic.comb(primal_value(N), primal_value(k), exact=True,
                               repetition=repetition)
        N, k = as_operand(N), as_operand(k)
        n_value, k_value = primal_value(N), primal_value(k)
        if repetition:
            one = (k_value == 0) & (n_value >= 0)
            return where(one, 1.0, binom(N + k - 1.0, k))
        inside = (k_value <= n_value) & (n_value >= 0) & (k_value >= 0)
        # binom taken inside only: outside, its partials may be 0·inf
        return where(inside, binom(where(inside, N, 1.0), where(inside, k, 0.0)), 0.0)

    @scipy_rule("scipy.special", "factorial")
    def factorial(n: Any, exact: bool = False, extend: str = "zero") -> Any:
        """``scipy.special.factorial``: Γ(n + 1), 0 for n < 0 (``extend="zero"``)
        (exact=True: the integer, values only)."""
        if exact:
            from scipy.special import _basic
            value = np.asarray(primal_value(n))
            if np.issubdtype(value.dtype, np.floating) and np.all(value == np.round(value)):
                value = value.astype(np.int64)  # a Dual's values are floats: its integers
            return _basic.factorial(value[()], exact=True, extend=extend)
        n = as_operand(n)
        value = gamma(n + 1.0)
        if extend == "complex":
            return value
        if extend != "zero":
            raise ValueError(f"argument `extend` must be either 'zero' or 'complex', "
                             f"received: {extend}")
        value = where(primal_value(n) < 0, 0.0, value)
        # SciPy fills arrays into float64 zeros (a float32 array gives float64).
        return np.astype(value, np.float64) if isinstance(primal_value(n), np.ndarray) else value

    globals().update(locals(), __all__=list(_DECLARED_NAMES))


__all__: list[str] = []  # the names below, once declared
_DECLARED_NAMES = (
    "binom",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "entr",
    "exp1",
    "expi",
    "expn",
    "factorial",
    "fresnel_c",
    "fresnel_s",
    "gammasgn",
    "hurwitz_zeta",
    "hyp1f1",
    "hyp2f1",
    "kl_div",
    "loggamma",
    "owens_t",
    "poch",
    "rel_entr",
    "riemann_zeta",
    "sici_ci",
    "sici_si",
    "spence",
    "wofz",
    "zeta",
    "zeta_dx",
)
