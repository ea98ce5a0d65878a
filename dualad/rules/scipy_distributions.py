"""scipy.stats distributions beyond norm, t, gamma, beta and poisson: those of
``jax.scipy.stats``.

Continuous (in ``z = (x - loc) / scale`` and the shape parameters): cauchy, chi2,
expon, gennorm, gumbel_l, gumbel_r, laplace, logistic, pareto, truncnorm, uniform,
vonmises, wrapcauchy. Discrete (in ``k - loc``, a constant point of the lattice):
bernoulli, betabinom, binom, geom, nbinom. Multivariate: dirichlet (``logpdf``/``pdf``)
and multinomial (``logpmf``/``pmf``, differentiable in ``p``).

The formulas are registered with :func:`dualad.rules.scipy_stats.register_distribution`,
whose dispatchers on ``rv_continuous``/``rv_discrete`` handle loc, scale, the support,
SciPy's parameter checks and frozen distributions. Methods without a formula come from
others (``pdf = exp(logpdf)``, ``sf = 1 - cdf``, ``isf(q) = ppf(1 - q)``); discrete
``ppf``/``isf`` give values only. Derivatives of the cdf in a shape parameter that enters
an incomplete gamma or beta function as its order (chi2 in ``df``, gennorm in ``beta``,
binom/nbinom in ``n``) are those of scipy.special's rule (a TypeError where it has none).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..dual import as_operand, primal_value
from .elementwise import (
    absolute,
    arctan,
    cos,
    equal,
    exp,
    expm1,
    floor,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    power,
    sign,
    tan,
    where,
)
from .scipy_functions import scipy_rule
from .scipy_stats import register_distribution
from .shape import ON_PRIMAL

_LOG2 = math.log(2.0)
_LOG_PI = math.log(math.pi)
_LOG_2PI = math.log(2.0 * math.pi)
_LOG_SQRT_2PI = 0.5 * _LOG_2PI


def _sc():
    """dualad's scipy.special primitives."""
    from . import special
    return special


def _unit_interval(*ps):
    good = True
    for p in ps:
        good = good & greater_equal(p, 0.0) & less_equal(p, 1.0)
    return good


def _integral(n):
    return greater_equal(n, 0.0) & equal(floor(n), n)


# ---------------------------------------------------------------------------
# Continuous distributions without shape parameters
# ---------------------------------------------------------------------------

register_distribution("cauchy", {
    "logpdf": lambda z: -_LOG_PI - log1p(z * z),
    "cdf": lambda z: 0.5 + arctan(z) / math.pi,
    "sf": lambda z: 0.5 - arctan(z) / math.pi,
    "ppf": lambda q: tan(math.pi * q - 0.5 * math.pi),
    "isf": lambda q: tan(0.5 * math.pi - math.pi * q),
})
register_distribution("expon", {
    "logpdf": lambda z: -z,
    "cdf": lambda z: -expm1(-z),
    "sf": lambda z: exp(-z),
    "logsf": lambda z: -z,
    "ppf": lambda q: -log1p(-q),
    "isf": lambda q: -log(q),
})
register_distribution("gumbel_r", {
    "logpdf": lambda z: -z - exp(-z),
    "cdf": lambda z: exp(-exp(-z)),
    "logcdf": lambda z: -exp(-z),
    "sf": lambda z: -expm1(-exp(-z)),
    "ppf": lambda q: -log(-log(q)),
    "isf": lambda q: -log(-log1p(-q)),
})
register_distribution("gumbel_l", {
    "logpdf": lambda z: z - exp(z),
    "cdf": lambda z: -expm1(-exp(z)),
    "sf": lambda z: exp(-exp(z)),
    "logsf": lambda z: -exp(z),
    "ppf": lambda q: log(-log1p(-q)),
    "isf": lambda q: log(-log(q)),
})


def _laplace_tail(z):  # ½ exp(-|z|): the smaller of cdf and sf, never overflowing
    return 0.5 * exp(-absolute(z))


register_distribution("laplace", {
    "logpdf": lambda z: -_LOG2 - absolute(z),
    "cdf": lambda z: where(greater(primal_value(z), 0.0), 1.0 - _laplace_tail(z),
                           _laplace_tail(z)),
    "sf": lambda z: where(greater(primal_value(z), 0.0), _laplace_tail(z),
                          1.0 - _laplace_tail(z)),
    "ppf": lambda q: where(greater(primal_value(q), 0.5), -log(2.0 - 2.0 * q),
                           log(2.0 * q)),
    "isf": lambda q: where(greater(primal_value(q), 0.5), log(2.0 - 2.0 * q),
                           -log(2.0 * q)),
})
register_distribution("logistic", {
    "logpdf": lambda z: -absolute(z) - 2.0 * log1p(exp(-absolute(z))),
    "cdf": lambda z: _sc().expit(z),
    "sf": lambda z: _sc().expit(-z),
    "logcdf": lambda z: _sc().log_expit(z),
    "logsf": lambda z: _sc().log_expit(-z),
    "ppf": lambda q: _sc().logit(q),
    "isf": lambda q: -_sc().logit(q),
})
register_distribution("uniform", {
    "logpdf": lambda z: 0.0 * z,
    "cdf": lambda z: z,
    "sf": lambda z: 1.0 - z,
    "ppf": lambda q: q,
    "isf": lambda q: 1.0 - q,
})

# ---------------------------------------------------------------------------
# Continuous distributions with shape parameters
# ---------------------------------------------------------------------------

register_distribution("chi2", {
    "logpdf": lambda z, df: (_sc().xlogy(0.5 * df - 1.0, z) - 0.5 * z
                             - _sc().gammaln(0.5 * df) - 0.5 * _LOG2 * df),
    "cdf": lambda z, df: _sc().gammainc(0.5 * df, 0.5 * z),
    "sf": lambda z, df: _sc().gammaincc(0.5 * df, 0.5 * z),
})


def _gennorm_cdf(z, beta):
    c = 0.5 * sign(primal_value(z))
    return (0.5 + c) - c * _sc().gammaincc(1.0 / beta, power(absolute(z), beta))


register_distribution("gennorm", {
    "logpdf": lambda z, beta: (log(0.5 * beta) - _sc().gammaln(1.0 / beta)
                               - power(absolute(z), beta)),
    "cdf": _gennorm_cdf,
    "sf": lambda z, beta: _gennorm_cdf(-z, beta),
})
register_distribution("pareto", {
    "logpdf": lambda z, b: log(b) - (b + 1.0) * log(z),
    "cdf": lambda z, b: -expm1(-b * log(z)),
    "logcdf": lambda z, b: log1p(-exp(-b * log(z))),
    "sf": lambda z, b: exp(-b * log(z)),
    "logsf": lambda z, b: -b * log(z),
    "ppf": lambda q, b: power(1.0 - q, -1.0 / b),
    "isf": lambda q, b: power(q, -1.0 / b),
})


def _log_gauss_mass(a, b):
    """log(Φ(b) - Φ(a)) for a < b, as SciPy: in the tail both ends are in (a pair of
    log_ndtr's), across the middle from the two outer tails. Each branch sees only
    arguments it is stable at, so no nan reaches a derivative through ``where``."""
    av, bv = primal_value(a), primal_value(b)
    left, right = less_equal(bv, 0.0), greater(av, 0.0)
    central = ~(left | right)
    la, lb = where(left, a, -1.0), where(left, b, 0.0)
    ra, rb = where(right, a, 0.0), where(right, b, 1.0)
    ca, cb = where(central, a, -1.0), where(central, b, 1.0)
    ndtr, log_ndtr = _sc().ndtr, _sc().log_ndtr
    on_left = log_ndtr(lb) + log(-expm1(log_ndtr(la) - log_ndtr(lb)))
    on_right = log_ndtr(-ra) + log(-expm1(log_ndtr(-rb) - log_ndtr(-ra)))
    across = log1p(-ndtr(ca) - ndtr(-cb))
    return where(left, on_left, where(right, on_right, across))


register_distribution("truncnorm", {
    "logpdf": lambda z, a, b: -0.5 * (z * z) - _LOG_SQRT_2PI - _log_gauss_mass(a, b),
    "logcdf": lambda z, a, b: _log_gauss_mass(a, z) - _log_gauss_mass(a, b),
    "logsf": lambda z, a, b: _log_gauss_mass(z, b) - _log_gauss_mass(a, b),
}, argcheck=lambda a, b: less(a, b))
register_distribution("vonmises", {
    "logpdf": lambda z, kappa: kappa * (cos(z) - 1.0) - log(2.0 * math.pi * _sc().i0e(kappa)),
}, argcheck=lambda kappa: greater_equal(kappa, 0.0))
register_distribution("wrapcauchy", {
    "logpdf": lambda z, c: (log1p(-c * c) - _LOG_2PI
                            - log(1.0 + c * c - 2.0 * c * cos(z))),
}, argcheck=lambda c: greater(c, 0.0) & less(c, 1.0))

# ---------------------------------------------------------------------------
# Discrete distributions: k is a constant point of the lattice
# ---------------------------------------------------------------------------


def _binom_logpmf(k, n, p):
    comb = _sc().gammaln(n + 1.0) - (_sc().gammaln(k + 1.0) + _sc().gammaln(n - k + 1.0))
    return comb + _sc().xlogy(k, p) + _sc().xlog1py(n - k, -p)


register_distribution("bernoulli", {
    "logpmf": lambda k, p: _sc().xlogy(k, p) + _sc().xlog1py(1.0 - k, -p),
    "cdf": lambda k, p: 1.0 - p,  # k = 0: the only point inside the support below 1
    "sf": lambda k, p: p,
    "ppf": lambda q, p: where(greater(q, 1.0 - p), 1.0, 0.0),
    "isf": lambda q, p: where(less(q, p), 1.0, 0.0),
}, discrete=True, argcheck=_unit_interval)
register_distribution("binom", {
    "logpmf": _binom_logpmf,
    "cdf": lambda k, n, p: _sc().betainc(n - k, k + 1.0, 1.0 - p),
    "sf": lambda k, n, p: _sc().betainc(k + 1.0, n - k, p),
}, discrete=True, argcheck=lambda n, p: _integral(n) & _unit_interval(p))
register_distribution("betabinom", {
    "logpmf": lambda k, n, a, b: (-log(n + 1.0) - _sc().betaln(n - k + 1.0, k + 1.0)
                                  + _sc().betaln(k + a, n - k + b) - _sc().betaln(a, b)),
}, discrete=True,
    argcheck=lambda n, a, b: _integral(n) & greater(a, 0.0) & greater(b, 0.0))
register_distribution("geom", {
    "logpmf": lambda k, p: _sc().xlog1py(k - 1.0, -p) + log(p),
    "cdf": lambda k, p: -expm1(log1p(-p) * k),
    "sf": lambda k, p: exp(log1p(-p) * k),
    "logsf": lambda k, p: log1p(-p) * k,
}, discrete=True, argcheck=lambda p: greater(p, 0.0) & less_equal(p, 1.0))
register_distribution("nbinom", {
    "logpmf": lambda k, n, p: (_sc().gammaln(n + k) - _sc().gammaln(k + 1.0)
                               - _sc().gammaln(n) + n * log(p) + _sc().xlog1py(k, -p)),
    "cdf": lambda k, n, p: _sc().betainc(n, k + 1.0, p),
    "sf": lambda k, n, p: _sc().betaincc(n, k + 1.0, p),
}, discrete=True,
    argcheck=lambda n, p: greater(n, 0.0) & greater(p, 0.0) & less_equal(p, 1.0))

# ---------------------------------------------------------------------------
# Multivariate: dirichlet (x's first axis the components), multinomial (last axis)
# ---------------------------------------------------------------------------


def _dirichlet_logpdf(self, x, alpha):
    alpha, x = as_operand(alpha), as_operand(x)
    av = primal_value(alpha)
    if np.ndim(av) != 1:
        raise ValueError("Parameter vector 'a' must be one dimensional, but a.shape = "
                         f"{np.shape(av)}.")
    k = np.shape(av)[0]
    if np.shape(primal_value(x))[0] == k - 1:  # SciPy completes x to sum to 1
        x = np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)], axis=0)
    elif np.shape(primal_value(x))[0] != k:
        raise ValueError("Vector 'x' must have either the same number of entries as, or "
                         f"one entry fewer than, parameter vector 'a', but alpha.shape = "
                         f"{np.shape(av)} and x.shape = {np.shape(primal_value(x))}.")
    xv = primal_value(x)
    if isinstance(xv, np.ndarray | np.generic) and (
            np.any(xv < 0) or np.any(np.abs(np.sum(xv, axis=0) - 1.0) > 10e-10)):
        raise ValueError("Each entry in 'x' must be within the simplex (nonnegative, "
                         "summing to 1 along the first axis).")
    shape = (k,) + (1,) * (np.ndim(xv) - 1)
    alpha = np.reshape(alpha, shape)
    log_norm = np.sum(_sc().gammaln(alpha), axis=0) - _sc().gammaln(np.sum(alpha, axis=0))
    return np.sum(_sc().xlogy(alpha - 1.0, x), axis=0) - log_norm


def _dirichlet_pdf(self, x, alpha):
    return exp(_dirichlet_logpdf(self, x, alpha))


@functools.cache
def _multinomial_completes_the_last_probability() -> bool:
    """Whether SciPy's multinomial replaces p[-1] by 1 - the sum of the others (before
    SciPy 1.18, with a FutureWarning) rather than giving nan where p does not sum to 1."""
    import scipy
    return np.lib.NumpyVersion(scipy.__version__) < "1.18.0"


def _multinomial_logpmf(self, x, n, p):
    """SciPy's: -inf where the counts are not nonnegative integers summing to n. Before
    SciPy 1.18 the last probability is replaced by 1 - the sum of the others (so ∂p[-1]
    = 0); from 1.18 on, p must sum to 1 (to 10 ulps) and lie in [0, 1], else nan."""
    p = as_operand(p)
    bad = False
    if _multinomial_completes_the_last_probability():
        p = np.concatenate([p[..., :-1], 1.0 - np.sum(p[..., :-1], axis=-1, keepdims=True)],
                           axis=-1)
    else:
        eps = np.finfo(np.result_type(primal_value(p).dtype, np.float32)).eps * 10
        any_ = ON_PRIMAL["any"]  # (traced values too)
        bad = (greater(absolute(1.0 - np.sum(p, axis=-1)), eps)
               | any_(less(p, 0.0), axis=-1) | any_(greater(p, 1.0), axis=-1)
               | less(primal_value(as_operand(n)), 0))
    x = primal_value(as_operand(x)) + 0.0
    n = primal_value(as_operand(n)) + 0.0
    good = np.all(equal(floor(x), x) & greater_equal(x, 0.0), axis=-1) & equal(
        np.sum(x, axis=-1), n)
    gammaln = _sc().gammaln
    out = gammaln(n + 1.0) + np.sum(_sc().xlogy(x, p) - gammaln(x + 1.0), axis=-1)
    return where(bad, np.nan, where(good, out, -np.inf))


def _multinomial_pmf(self, x, n, p):
    return exp(_multinomial_logpmf(self, x, n, p))


_MULTIVARIATE = "scipy.stats._multivariate"
scipy_rule(_MULTIVARIATE, "dirichlet_gen.logpdf")(_dirichlet_logpdf)
scipy_rule(_MULTIVARIATE, "dirichlet_gen.pdf")(_dirichlet_pdf)
scipy_rule(_MULTIVARIATE, "multinomial_gen.logpmf")(_multinomial_logpmf)
scipy_rule(_MULTIVARIATE, "multinomial_gen.pmf")(_multinomial_pmf)
register_distribution("dirichlet")
register_distribution("multinomial")
