"""scipy.stats distributions JAX lacks, for maximum-likelihood fits: extreme values,
lifetimes, half and folded normals.

Continuous, in ``z = (x - loc) / scale`` and the shape parameters: exponweib, fisk,
foldnorm, genextreme, genpareto, gompertz, halfcauchy, halfnorm, invgamma, invgauss,
lognorm, lomax, loguniform (and reciprocal), maxwell, nakagami, powerlaw, rayleigh,
skewnorm, triang, weibull_max, weibull_min. Registered with
:func:`dualad.rules.scipy_stats.register_distribution` as in
:mod:`dualad.rules.scipy_distributions`.

The forms keep their digits where SciPy's closed forms lose them: right tails from
the survival function, ``log(1 - e^-t)`` switched at ``t = log 2``, genextreme and
genpareto near ``c = 0`` (their Gumbel and exponential limits) through
``log1p(u)/u`` and ``expm1(v)/v`` by series for small ``u``, ``v``, so that their
derivatives in ``c`` do not cancel either. skewnorm's cdf is SciPy's own (Boost's
Owen's T, integrated where that loses the left tail), a primitive whose derivatives
are closed forms. Derivatives in a shape parameter that is the order of an incomplete
gamma function (invgamma.cdf in ``a``, nakagami.cdf in ``nu``) are gammainc's:
at most twice.
"""

from __future__ import annotations

import math

import numpy as np

from ..dual import primal_value
from ..primitive import Primitive
from .elementwise import (
    absolute,
    arctan,
    arctan2,
    broadcast_shape_rule,
    cosh,
    equal,
    exp,
    expm1,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    power,
    sqrt,
    tan,
    where,
)
from .scipy_stats import register_distribution

_LOG2 = math.log(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_SQRT_2_OVER_PI = 0.5 * math.log(2.0 / math.pi)
_SQRT2 = math.sqrt(2.0)


def _sc():
    """dualad's scipy.special primitives."""
    from . import special
    return special


def _finite(*ps):
    good = True
    for p in ps:
        good = good & greater(p, -np.inf) & less(p, np.inf)
    return good


def _log1mexp(t):
    """log(1 - e^-t) for t > 0: log(-expm1(-t)) up to log 2, log1p(-e^-t) beyond
    (Mächler's switch: each where the other cancels)."""
    near = less_equal(primal_value(t), _LOG2)
    return where(near, log(-expm1(-where(near, t, 1.0))), log1p(-exp(-where(near, 1.0, t))))


# log1p(u)/u = Σₖ (-u)ᵏ/(k+1) and expm1(v)/v = Σₖ vᵏ/(k+1)!, by their series near 0,
# where the closed forms' derivatives cancel (to 1e-17 at the switch; the closed forms'
# derivatives lose at most ~(1/switch)^order ulps beyond it).
_LOG1P_OVER = [(-1.0) ** k / (k + 1) for k in range(40)]
_LOG1P_SWITCH = 0.25
_EXPM1_OVER = [1.0 / math.factorial(k + 1) for k in range(24)]
_EXPM1_SWITCH = 1.0


def _square(x):
    return x * x


def _horner(coefficients, u):
    total = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        total = total * u + c
    return total


def _log1p_over(c, z):
    """log1p(c·z)/c, z at c = 0 (c·z > -1)."""
    u = primal_value(c * z)
    near = less(absolute(u), _LOG1P_SWITCH)
    cs = where(near, 1.0, c)
    return where(near, z * _horner(_LOG1P_OVER, where(near, c * z, 0.0)),
                 log1p(cs * where(near, 1.0, z)) / cs)


def _expm1_over(c, y):
    """expm1(c·y)/c, y at c = 0."""
    v = primal_value(c * y)
    near = less(absolute(v), _EXPM1_SWITCH)
    cs = where(near, 1.0, c)
    return where(near, y * _horner(_EXPM1_OVER, where(near, c * y, 0.0)),
                 expm1(cs * where(near, 1.0, y)) / cs)


def _log_of(small, complement):
    """log ``small(*args)`` where it is below 1/2, log1p(-``complement``) above (SciPy's
    logcdf and logsf of a distribution without its own)."""
    def formula(*args):
        p, q = small(*args), complement(*args)
        below = less(primal_value(p), 0.5)
        return where(below, log(where(below, p, 0.5)), log1p(-where(below, 0.5, q)))
    return formula


def _with_logs(formulas: dict) -> dict:
    """``formulas`` with logcdf and logsf from cdf and sf where it has none."""
    cdf, sf = formulas["cdf"], formulas["sf"]
    return {"logcdf": _log_of(cdf, sf), "logsf": _log_of(sf, cdf)} | formulas


def _guarded(bad, z, safe, formula, value):
    """``formula(z)`` where ``bad`` is false, ``value`` where it is true; ``formula``
    sees ``safe`` there (the ends of a support, where a formula's 0·∞ would reach the
    derivatives)."""
    return where(bad, value, formula(where(bad, safe, z)))


# ---------------------------------------------------------------------------
# Weibull, exponentiated Weibull, Rayleigh, Gompertz
# ---------------------------------------------------------------------------


def _weibull_logpdf(w, c):
    return log(c) + _sc().xlogy(c - 1.0, w) - power(w, c)


register_distribution("weibull_min", {
    "logpdf": _weibull_logpdf,
    "cdf": lambda z, c: -expm1(-power(z, c)),
    "logcdf": lambda z, c: _log1mexp(power(z, c)),
    "sf": lambda z, c: exp(-power(z, c)),
    "logsf": lambda z, c: -power(z, c),
    "ppf": lambda q, c: power(-log1p(-q), 1.0 / c),
    "isf": lambda q, c: power(-log(q), 1.0 / c),
})
register_distribution("weibull_max", {
    "logpdf": lambda z, c: _weibull_logpdf(-z, c),
    "cdf": lambda z, c: exp(-power(-z, c)),
    "logcdf": lambda z, c: -power(-z, c),
    "sf": lambda z, c: -expm1(-power(-z, c)),
    "logsf": lambda z, c: _log1mexp(power(-z, c)),
    "ppf": lambda q, c: -power(-log(q), 1.0 / c),
    "isf": lambda q, c: -power(-log1p(-q), 1.0 / c),
})


def _exponweib_logpdf(z, a, c):
    # log(1 - e^-t) as log t + log(-expm1(-t)/t), t = z^c: the log z of both terms summed
    # exactly, (ac - 1)·log z (so that a·c = 1 leaves no 1/z - 1/z near z = 0)
    t = power(z, c)
    return (log(a) + log(c) + _sc().xlogy(a * c - 1.0, z)
            + (a - 1.0) * log(_expm1_over(-t, 1.0)) - t)


def _exponweib_ppf(s, a, c):  # s = -log(q)/a: (-log(1 - q^(1/a)))^(1/c)
    return power(-_log1mexp(s), 1.0 / c)


register_distribution("exponweib", {
    "logpdf": _exponweib_logpdf,
    "logcdf": lambda z, a, c: a * _log1mexp(power(z, c)),
    "sf": lambda z, a, c: -expm1(a * _log1mexp(power(z, c))),
    "logsf": lambda z, a, c: _log1mexp(-a * _log1mexp(power(z, c))),
    "ppf": lambda q, a, c: _exponweib_ppf(-log(q) / a, a, c),
    "isf": lambda q, a, c: _exponweib_ppf(-log1p(-q) / a, a, c),
})
register_distribution("rayleigh", {
    "logpdf": lambda z: log(z) - 0.5 * (z * z),
    "cdf": lambda z: -expm1(-0.5 * (z * z)),
    "logcdf": lambda z: _log1mexp(0.5 * (z * z)),
    "sf": lambda z: exp(-0.5 * (z * z)),
    "logsf": lambda z: -0.5 * (z * z),
    "ppf": lambda q: sqrt(-2.0 * log1p(-q)),
    "isf": lambda q: sqrt(-2.0 * log(q)),
})
register_distribution("gompertz", {
    "logpdf": lambda z, c: log(c) + z - c * expm1(z),
    "cdf": lambda z, c: -expm1(-c * expm1(z)),
    "logcdf": lambda z, c: _log1mexp(c * expm1(z)),
    "sf": lambda z, c: exp(-c * expm1(z)),
    "logsf": lambda z, c: -c * expm1(z),
    "ppf": lambda q, c: log1p(-log1p(-q) / c),
    "isf": lambda q, c: log1p(-log(q) / c),
})

# ---------------------------------------------------------------------------
# Generalized extreme value and Pareto: c = 0 is Gumbel / exponential
# ---------------------------------------------------------------------------


def _genextreme_t(z, c):
    """log(-log cdf) = log1p(-cz)/c, -z at c = 0."""
    return -_log1p_over(-c, z)


def _genextreme_logpdf(z, c):
    # -e^t + t - log1p(-cz); at the end z = 1/c of c > 0 SciPy's -inf (0 for c = 1).
    cz = primal_value(c * z)

    def inside(z):
        t = _genextreme_t(z, c)
        return -exp(t) + t - log1p(-c * z)

    return _guarded(equal(cz, 1.0), z, 0.0, inside,
                    where(equal(primal_value(c), 1.0), 0.0, -np.inf))


def _genextreme_support(c):  # (1/c, ∞) for c < 0, (-∞, 1/c) for c > 0
    below, above = less(c, 0.0), greater(c, 0.0)
    return (where(below, 1.0 / where(below, c, -1.0), -np.inf),
            where(above, 1.0 / where(above, c, 1.0), np.inf))


register_distribution("genextreme", {
    "logpdf": _genextreme_logpdf,
    "cdf": lambda z, c: exp(-exp(_genextreme_t(z, c))),
    "logcdf": lambda z, c: -exp(_genextreme_t(z, c)),
    "sf": lambda z, c: -expm1(-exp(_genextreme_t(z, c))),
    "logsf": lambda z, c: _log1mexp(exp(_genextreme_t(z, c))),
    # -expm1(-cy)/c, y = -log(-log q) (ppf), -log(-log1p(-q)) (isf)
    "ppf": lambda q, c: _expm1_over(-c, -log(-log(q))),
    "isf": lambda q, c: _expm1_over(-c, -log(-log1p(-q))),
}, argcheck=_finite, support=_genextreme_support)


def _genpareto_logsf(z, c):
    """-log1p(cz)/c, -z at c = 0."""
    return -_log1p_over(c, z)


def _genpareto_logpdf(z, c):
    # (c + 1)·logsf; at the end z = -1/c of c < 0 SciPy's -xlog1py(c + 1, -1)/c.
    at_end = where(equal(primal_value(c), -1.0), 0.0,
                   where(greater(primal_value(c), -1.0), -np.inf, np.inf))
    return _guarded(equal(primal_value(c * z), -1.0), z, 0.0,
                    lambda z: (c + 1.0) * _genpareto_logsf(z, c), at_end)


register_distribution("genpareto", {
    "logpdf": _genpareto_logpdf,
    "cdf": lambda z, c: -expm1(_genpareto_logsf(z, c)),
    "logcdf": lambda z, c: _log1mexp(-_genpareto_logsf(z, c)),
    "sf": lambda z, c: exp(_genpareto_logsf(z, c)),
    "logsf": _genpareto_logsf,
    # expm1(c·L)/c with L = -log1p(-q) (ppf), -log q (isf)
    "ppf": lambda q, c: _expm1_over(c, -log1p(-q)),
    "isf": lambda q, c: _expm1_over(c, -log(q)),
}, argcheck=_finite, support=lambda c: (0.0 * c, where(
    less(c, 0.0), -1.0 / where(less(c, 0.0), c, -1.0), np.inf)))

# ---------------------------------------------------------------------------
# Log-scale families: lognorm, fisk (log-logistic), lomax, loguniform, powerlaw
# ---------------------------------------------------------------------------

register_distribution("lognorm", {
    "logpdf": lambda z, s: (-0.5 * ((log(z) / s) * (log(z) / s)) - log(s) - log(z)
                            - _LOG_SQRT_2PI),
    "cdf": lambda z, s: _sc().ndtr(log(z) / s),
    "logcdf": lambda z, s: _sc().log_ndtr(log(z) / s),
    "sf": lambda z, s: _sc().ndtr(-log(z) / s),
    "logsf": lambda z, s: _sc().log_ndtr(-log(z) / s),
    "ppf": lambda q, s: exp(s * _sc().ndtri(q)),
    "isf": lambda q, s: exp(-s * _sc().ndtri(q)),
})


def _fisk_logpdf(z, c):
    # log z is logistic with scale 1/c: log c - log z - |u| - 2 log1p(e^-|u|), u = c log z;
    # at z = 0 SciPy's log c + xlogy(c - 1, 0).
    def inside(z):
        u = absolute(c * log(z))
        return log(c) - log(z) - u - 2.0 * log1p(exp(-u))

    return _guarded(equal(primal_value(z), 0.0), z, 1.0, inside,
                    log(c) + _sc().xlogy(c - 1.0, z))


register_distribution("fisk", {
    "logpdf": _fisk_logpdf,
    "cdf": lambda z, c: _sc().expit(c * log(z)),
    "logcdf": lambda z, c: _sc().log_expit(c * log(z)),
    "sf": lambda z, c: _sc().expit(-c * log(z)),
    "logsf": lambda z, c: _sc().log_expit(-c * log(z)),
    "ppf": lambda q, c: exp(_sc().logit(q) / c),
    "isf": lambda q, c: exp(-_sc().logit(q) / c),
})
register_distribution("lomax", {
    "logpdf": lambda z, c: log(c) - (c + 1.0) * log1p(z),
    "cdf": lambda z, c: -expm1(-c * log1p(z)),
    "logcdf": lambda z, c: _log1mexp(c * log1p(z)),
    "sf": lambda z, c: exp(-c * log1p(z)),
    "logsf": lambda z, c: -c * log1p(z),
    "ppf": lambda q, c: expm1(-log1p(-q) / c),
    "isf": lambda q, c: expm1(-log(q) / c),
})


def _log_span(a, b):
    return log(b) - log(a)


# log(z/a) and log(b/z) as log1p of (z - a)/a and (z - b)/b: exact differences near the ends
_LOGUNIFORM = {
    "logpdf": lambda z, a, b: -log(z) - log(_log_span(a, b)),
    "cdf": lambda z, a, b: log1p((z - a) / a) / _log_span(a, b),
    "sf": lambda z, a, b: -log1p((z - b) / b) / _log_span(a, b),
    "ppf": lambda q, a, b: exp(log(a) + q * _log_span(a, b)),
    "isf": lambda q, a, b: exp(log(b) - q * _log_span(a, b)),
}
for _name in ("loguniform", "reciprocal"):
    register_distribution(_name, _with_logs(_LOGUNIFORM),
                          argcheck=lambda a, b: greater(a, 0.0) & greater(b, a))
register_distribution("powerlaw", {
    "logpdf": lambda z, a: log(a) + _sc().xlogy(a - 1.0, z),
    "cdf": lambda z, a: power(z, a),
    "logcdf": lambda z, a: a * log(z),
    "sf": lambda z, a: -expm1(a * log(z)),
    "logsf": lambda z, a: _log1mexp(-a * log(z)),
    "ppf": lambda q, a: power(q, 1.0 / a),
    "isf": lambda q, a: exp(log1p(-q) / a),
})


def _triang(rising_side, falling_side):
    """A formula by sides: rising (z < c, and all of c = 1), falling; c safe on each."""
    def formula(z, c):
        rising = less(primal_value(z), primal_value(c)) | equal(primal_value(c), 1.0)
        return where(rising, rising_side(z, where(rising, c, 0.5)),
                     falling_side(z, where(rising, 0.5, c)))
    return formula


def _one_minus(small, difference):
    """1 - ``small``, or where that is below 1/2 (and cancels) ``difference``, the same
    number from terms at most 4 times it."""
    def formula(z, c):
        near = greater(primal_value(small(z, c)), 0.5)
        zs, cs = where(near, z, 0.5), where(near, c, 0.5)
        return where(near, difference(zs, cs), 1.0 - small(where(near, 0.5, z), c))
    return formula


def _triang_rising(z, c):  # the rising side's cdf z²/c
    return z * z / c


def _triang_falling(z, c):  # the falling side's sf (1 - z)²/(1 - c)
    return (1.0 - z) * (1.0 - z) / (1.0 - c)


def _triang_ppf(q, c):
    rising = less(primal_value(q), primal_value(c))
    c_up, c_down = where(rising, c, 0.5), where(rising, 0.5, c)
    return where(rising, sqrt(c_up * where(rising, q, 0.5)),
                 1.0 - sqrt((1.0 - c_down) * (1.0 - where(rising, 0.5, q))))


def _triang_isf(q, c):
    # ppf(1 - q) without forming 1 - q: 1 - √((1 - c)q) on the falling side (q < 1 - c)
    falling = less(primal_value(q), 1.0 - primal_value(c))
    c_down, c_up = where(falling, c, 0.5), where(falling, 0.5, c)
    return where(falling, 1.0 - sqrt((1.0 - c_down) * where(falling, q, 0.5)),
                 sqrt(c_up * (1.0 - where(falling, 0.5, q))))


register_distribution("triang", _with_logs({
    "logpdf": _triang(lambda z, c: log(2.0 * z / c),
                      lambda z, c: log(2.0 * (1.0 - z) / (1.0 - c))),
    "cdf": _triang(_triang_rising, _one_minus(
        _triang_falling, lambda z, c: (z * (2.0 - z) - c) / (1.0 - c))),
    "sf": _triang(_one_minus(
        _triang_rising, lambda z, c: ((1.0 - z) * (1.0 + z) - (1.0 - c)) / c),
        _triang_falling),
    "ppf": _triang_ppf,
    "isf": _triang_isf,
}), argcheck=lambda c: greater_equal(c, 0.0) & less_equal(c, 1.0))


# ---------------------------------------------------------------------------
# Normal relatives: halfnorm, foldnorm, skewnorm, maxwell, nakagami, invgauss
# ---------------------------------------------------------------------------


def _halfnorm_cdf(z):
    return _sc().erf(z / _SQRT2)


def _halfnorm_sf(z):
    return 2.0 * _sc().ndtr(-z)


def _halfnorm_logsf(z):
    # log 2 + log Φ(-z) beyond z = 1 (2Φ(-z) underflows from z ≈ 38 on), log1p(-cdf) below
    far = greater(primal_value(z), 1.0)
    return where(far, _LOG2 + _sc().log_ndtr(-where(far, z, 2.0)),
                 log1p(-_halfnorm_cdf(where(far, 0.5, z))))


register_distribution("halfnorm", {
    "logpdf": lambda z: _LOG_SQRT_2_OVER_PI - 0.5 * (z * z),
    "cdf": _halfnorm_cdf,
    "logcdf": _log_of(_halfnorm_cdf, _halfnorm_sf),
    "sf": _halfnorm_sf,
    "logsf": _halfnorm_logsf,
    "ppf": lambda q: _SQRT2 * _sc().erfinv(q),
    "isf": lambda q: -_sc().ndtri(0.5 * q),
})
register_distribution("halfcauchy", _with_logs({
    "logpdf": lambda z: math.log(2.0 / math.pi) - log1p(z * z),
    "cdf": lambda z: (2.0 / math.pi) * arctan(z),
    "sf": lambda z: (2.0 / math.pi) * arctan2(1.0, z),
    "ppf": lambda q: tan((0.5 * math.pi) * q),
    "isf": lambda q: 1.0 / tan((0.5 * math.pi) * q),
}))
def _foldnorm_logpdf(z, c):
    # log(φ(z - c) + φ(z + c)) = -(z² + c²)/2 + log(2 cosh cz) - log √(2π), z, c ≥ 0: for
    # cz ≥ 20 as -(z - c)²/2 + log1p(e^(-2cz)) (cosh overflows; the squares would cancel)
    u = primal_value(c * z)
    far = greater_equal(u, 20.0)
    zf, cf = where(far, z, 0.0), where(far, c, 0.0)
    zn, cn = where(far, 0.0, z), where(far, 0.0, c)
    return where(far, -0.5 * _square(zf - cf) + log1p(exp(-2.0 * (cf * zf))),
                 -0.5 * (zn * zn + cn * cn) + _LOG2 + log(cosh(cn * zn))) - _LOG_SQRT_2PI


def _foldnorm_cdf(z, c):
    # ½(erf(v) - erf(u)), u = (c - z)/√2, v = (c + z)/√2: as ½(erfc(u) - erfc(v)) where
    # erfc(u) is the smaller (u > 0.4769), so that a small cdf keeps its digits.
    u, v = (c - z) / _SQRT2, (c + z) / _SQRT2
    tails = greater(primal_value(u), 0.4769)
    return where(tails, 0.5 * (_sc().erfc(u) - _sc().erfc(v)), 0.5 * (_sc().erf(v) - _sc().erf(u)))


register_distribution("foldnorm", _with_logs({
    "logpdf": _foldnorm_logpdf,
    "cdf": _foldnorm_cdf,
    "sf": lambda z, c: 0.5 * (_sc().erfc((z - c) / _SQRT2) + _sc().erfc((z + c) / _SQRT2)),
}), argcheck=lambda c: greater_equal(c, 0.0))


def _skewnorm_cdf_kernel(z, a):
    """SciPy's skewnorm cdf (Boost's Φ(z) - 2T(z, a), integrated where small)."""
    import scipy.stats
    z, a = np.broadcast_arrays(np.asarray(z, dtype=np.float64),
                               np.asarray(a, dtype=np.float64))
    out = scipy.stats.skewnorm._cdf(z.ravel(), a.ravel())
    return np.reshape(out, z.shape)


#: skewnorm's cdf Φ(z) - 2T(z, a): ∂z the density 2φ(z)Φ(az), ∂a = -2 ∂T/∂a.
skewnorm_cdf = Primitive(
    "skewnorm_cdf", _skewnorm_cdf_kernel,
    partials=(lambda ans, z, a: 2.0 * exp(-0.5 * (z * z) - _LOG_SQRT_2PI
                                          + _sc().log_ndtr(a * z)),
              lambda ans, z, a: -exp(-0.5 * (z * z) * (1.0 + a * a))
              / (math.pi * (1.0 + a * a))),
    shape_rule=broadcast_shape_rule)


def _skewnorm_jax_kernel(z, a):
    return _sc()._host_kernel(_skewnorm_cdf_kernel)(z, a)


skewnorm_cdf.kernels["jax"] = _skewnorm_jax_kernel
register_distribution("skewnorm", _with_logs({
    "logpdf": lambda z, a: _LOG2 - 0.5 * (z * z) - _LOG_SQRT_2PI + _sc().log_ndtr(a * z),
    "cdf": skewnorm_cdf,
    "sf": lambda z, a: skewnorm_cdf(-z, -a),
}), argcheck=_finite)
register_distribution("maxwell", _with_logs({
    "logpdf": lambda z: _LOG_SQRT_2_OVER_PI + 2.0 * log(z) - 0.5 * (z * z),
    "cdf": lambda z: _sc().gammainc(1.5, 0.5 * (z * z)),
    "sf": lambda z: _sc().gammaincc(1.5, 0.5 * (z * z)),
}))
register_distribution("nakagami", _with_logs({
    "logpdf": lambda z, nu: (_LOG2 + _sc().xlogy(nu, nu) - _sc().gammaln(nu)
                             + _sc().xlogy(2.0 * nu - 1.0, z) - nu * (z * z)),
    "cdf": lambda z, nu: _sc().gammainc(nu, nu * (z * z)),
    "sf": lambda z, nu: _sc().gammaincc(nu, nu * (z * z)),
}))
register_distribution("invgamma", _with_logs({
    "logpdf": lambda z, a: -(a + 1.0) * log(z) - _sc().gammaln(a) - 1.0 / z,
    "cdf": lambda z, a: _sc().gammaincc(a, 1.0 / z),
    "sf": lambda z, a: _sc().gammainc(a, 1.0 / z),
}))


def _invgauss_terms(z, mu):
    """(r, log of e^(2/μ)·Φ(-s)), r = (z/μ - 1)/√z, s = (z/μ + 1)/√z: cdf = Φ(r) + that,
    sf = Φ(-r) - that."""
    root = sqrt(z)
    return (z / mu - 1.0) / root, 2.0 / mu + _sc().log_ndtr(-(z / mu + 1.0) / root)


def _invgauss_logcdf(z, mu):
    r, b = _invgauss_terms(z, mu)
    a = _sc().log_ndtr(r)
    return a + log1p(exp(b - a))


def _mills(x):
    """Φ(-x)/φ(x) (x ≥ 0)."""
    return math.sqrt(0.5 * math.pi) * _sc().erfcx(x / _SQRT2)


def _invgauss_logsf(z, mu):
    # Right of the mode of r (r > 0), Φ(-r) and e^(2/μ)Φ(-s) agree in many leading digits,
    # and their logs in more: there sf = φ(r)·(R(r) - R(s)) with R Mills' ratio (e^(2/μ)φ(s)
    # = φ(r)), whose difference loses ~log10(z/μ) digits, not twice that.
    r, b = _invgauss_terms(z, mu)
    right = greater(primal_value(r), 0.0)
    zr = where(right, z, 2.0 * mu)
    rr, sr = (zr / mu - 1.0) / sqrt(zr), (zr / mu + 1.0) / sqrt(zr)
    far = -0.5 * (rr * rr) - _LOG_SQRT_2PI + log(_mills(rr) - _mills(sr))
    a = _sc().log_ndtr(-r)
    near = a + _log1mexp(where(right, 1.0, a - b))
    return where(right, far, near)


register_distribution("invgauss", {
    # (z/μ - 1)²/(2z) as r²/2: no overflow of (z/μ)²
    "logpdf": lambda z, mu: (-_LOG_SQRT_2PI - 1.5 * log(z)
                             - 0.5 * _square((z / mu - 1.0) / sqrt(z))),
    "logcdf": _invgauss_logcdf,
    "logsf": _invgauss_logsf,
})
