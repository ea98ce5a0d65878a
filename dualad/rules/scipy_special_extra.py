"""Still more scipy.special ufuncs: elementary functions in their accurate forms,
functions of degrees, Box-Cox's inverses, the Huber and pseudo-Huber losses, modified
Bessel functions of the second kind and exponentially scaled Bessel functions, and the
chi-square, gamma, binomial and negative binomial distribution functions.

Declared as in :mod:`dualad.rules.scipy_special`: a row of partials written with
primitives, so that every order works; a JAX kernel for each (``jax.numpy``'s by name
where it has the function, SciPy's on the host otherwise). Orders (``kn``'s n, ``jve``'s,
``yve``'s and ``kve``'s v), the degrees of freedom of ``chdtr``/``chdtrc``, the shape b
of ``gdtr``/``gdtrc`` and the counts k, n of ``bdtr``/``nbdtr`` (truncated to integers
by SciPy) raise a TypeError when they carry a derivative. ``round`` is a step
(derivative 0). ``exprel``'s derivative and the derivatives of ``inv_boxcox`` in
``lmbda`` cancel near 0: series there. For large x, where k0e' = k0e - k1e and the
recurrence of ``kve`` cancel, the asymptotic series of e^x·K_v(x).

All are declared by :func:`declare` when scipy.special is imported, not with dualad
(see :func:`dualad.rules.special.declare_scipy_rules`).
"""

from __future__ import annotations

import math

from ..dual import primal_value
from ..primitive import Over
from .elementwise import (_power_base, absolute, clip, elementwise, equal, exp, floor, greater,
                          greater_equal, hypot, log, log1p, maximum, nondifferentiable,
                          not_equal, power, safe_divide, sign, sin, sqrt, where)
from .scipy_special import _horner, _log1p_over
from .special import _TWO_OVER_SQRT_PI, _host_kernel, _no_partial, sc

_PI = math.pi
_DEGREE = math.pi / 180.0


# exprel'(x) = (x·eˣ - expm1(x))/x² = Σₖ (k+1)/(k+2)!·xᵏ: its series for |x| < 1,
# where the difference cancels (20 terms leave < 1e-19).
_EXPREL_SERIES = [(k + 1) / math.factorial(k + 2) for k in range(20)]


def _exprel_partial(ans, x):
    # (eˣ - exprel)/x below -1, exprel·(1 - 1/x) + 1/x above 1 (no overflow of x·eˣ
    # before exprel's own), the series between.
    near = greater(1.0, absolute(x))
    xp, xn = where(greater_equal(x, 1.0), x, 2.0), where(greater_equal(-1.0, x), x, -2.0)
    far = where(greater(x, 0.0), ans * (1.0 - 1.0 / xp) + 1.0 / xp, (exp(xn) - ans) / xn)
    return where(near, _horner(_EXPREL_SERIES, x), far)


# (u/(1 + u) - log1p(u))/u² = Σⱼ (-1)ʲ⁺¹(j+1)/(j+2)·uʲ, for |u| < 0.1 (20 terms leave
# < 1e-20): ∂/∂λ of log1p(λy)/λ over y², which cancels near λy = 0.
_INV_BOXCOX_SERIES = [(-1.0) ** (j + 1) * (j + 1) / (j + 2) for j in range(20)]


def _inv_boxcox_log(y, lmbda):
    """log of inv_boxcox(y, λ) = log1p(λy)/λ (y at λ = 0)."""
    return y * _log1p_over(lmbda * y)


def _inv_boxcox_dlambda(y, lmbda):
    """∂/∂λ of log1p(λy)/λ (-y²/2 at λ = 0)."""
    u = lmbda * y
    near = greater(0.1, absolute(u))
    us = where(near, 1.0, u)
    direct = (us / (1.0 + us) - log1p(us)) / (us * us)
    return y * y * where(near, _horner(_INV_BOXCOX_SERIES, u), direct)


def _gamma_pdf(b, y):
    """y^(b-1)·e^(-y)/Γ(b); below y = 1 as a power, whose derivatives keep their
    digits where the density has underflowed (y^1.5 at y = 1e-300, not its derivative)."""
    from . import special
    small = greater(1.0, y)
    ys, yl = where(small, y, 0.5), where(small, 1.0, y)
    return where(small, power(ys, b - 1.0) * exp(-ys - special.gammaln(b)),
                 special._gamma_density(b, yl))


def _beta_pdf(a, b, p):
    """p^(a-1)·(1-p)^(b-1)/B(a, b), with the power of whichever of p, 1 - p is below ½
    taken as a power (as in :func:`_gamma_pdf`)."""
    from . import special
    low = greater(0.5, p)
    pl, ph = where(low, p, 0.25), where(low, 0.75, p)
    norm = special.betaln(a, b)
    return where(low, power(pl, a - 1.0) * exp(special.xlog1py(b - 1.0, -pl) - norm),
                 exp(special.xlogy(a - 1.0, ph) - norm) * power(1.0 - ph, b - 1.0))


def _pseudo_huber_dr(delta, r):
    """∂r of δ²(√(1 + (r/δ)²) - 1) = rδ/h, h = hypot(δ, r): as δ·sign(r)/hypot(1, δ/r)
    for |r| ≥ δ, r/hypot(1, r/δ) below, whose derivatives do not cancel (1/h - r²/h³
    loses (r/δ)² ulps, and its derivative in δ (δ/r)² ulps)."""
    big = greater_equal(absolute(r), delta) & not_equal(r, 0.0)
    rb, db = where(big, r, 1.0), where(big, delta, 0.0)
    rs, ds = where(big, 0.0, r), where(big | equal(delta, 0.0), 1.0, delta)
    return where(big, db * sign(rb) / hypot(1.0, db / rb), rs / hypot(1.0, rs / ds))


def _pseudo_huber_ddelta(delta, r):
    """∂δ of the same: (h - δ)²/h = q²/h, q = r²/(h + δ) (0 at δ = r = 0)."""
    h = hypot(delta, r)
    q = r * safe_divide(r, h + delta)
    return q * safe_divide(q, h)


_KE_FAR = 50.0


def _kve_far(v, x):
    """d/dx of kve(v, x) = eˣ·K_v(x) for x > max(50, 4v²), where kve - ½(kve(v-1) +
    kve(v+1)) cancels (x ulps): the derivative of the asymptotic series
    √(π/2x)·Σₖ aₖ x⁻ᵏ, aₖ = Πⱼ≤ₖ (4v² - (2j-1)²)/(8j), 20 terms; unused elsewhere."""
    vv = primal_value(v)
    nearest = where(greater(4.0 * (vv * vv), _KE_FAR), 4.0 * (vv * vv), _KE_FAR)
    far = greater(x, nearest)
    u = 1.0 / where(far, x, 2.0 * nearest)
    c, series, u_k = 1.0, -0.5, 1.0
    for k in range(1, 20):
        c = c * ((4.0 * (vv * vv) - (2 * k - 1) ** 2) / (8.0 * k))
        u_k = u_k * u
        series = series - (k + 0.5) * c * u_k
    return far, sqrt(0.5 * _PI * u) * (u * series)


def declare() -> None:
    """Declare these primitives: run by :func:`dualad.rules.special.declare_scipy_rules`
    once scipy.special is imported (after :mod:`dualad.rules.scipy_special`)."""
    from . import scipy_special

    # -- Elementary functions in their accurate forms ---------------------------------
    expm1 = elementwise(sc.expm1, lambda ans, x: exp(x))
    log1p_ = elementwise(sc.log1p, lambda ans, x: Over(x + 1.0))
    cbrt = elementwise(sc.cbrt, lambda ans, x: 1.0 / (3.0 * (ans * ans)), nonfinite=True)
    exprel = elementwise(sc.exprel, _exprel_partial)
    cosm1 = elementwise(sc.cosm1, lambda ans, x: -sin(x))
    # x^y - 1: ∂x = y·x^(y-1) (by power's rule: 0 at y = 0), ∂y = x^y·log x.
    powm1 = elementwise(sc.powm1, lambda ans, x, y: _power_base(power, x, y),
                        lambda ans, x, y: power(x, y) * log(where(equal(x, 0.0), 1.0, x)),
                        nonfinite=True)
    # Degrees: sindg and cosdg are exact at multiples of 90° (cosdg(90) = 0), so each
    # other's partials; tandg' = k/cosdg², cotdg' = -k/sindg², not k(1 + tandg²):
    # SciPy's tandg and cotdg lose digits next to their poles (1e-7 at cotdg(1e-8)).
    sindg = elementwise(sc.sindg, lambda ans, x: _DEGREE * cosdg(x))
    cosdg = elementwise(sc.cosdg, lambda ans, x: -_DEGREE * sindg(x))
    tandg = elementwise(sc.tandg, lambda ans, x: _DEGREE * (1.0 / cosdg(x)) ** 2)
    cotdg = elementwise(sc.cotdg, lambda ans, x: -_DEGREE * (1.0 / sindg(x)) ** 2)
    # radian(d, m, s) = (d + m/60 + s/3600)·π/180
    radian = elementwise(sc.radian, lambda ans, d, m, s: _DEGREE + 0.0 * ans,
                         lambda ans, d, m, s: _DEGREE / 60.0 + 0.0 * ans,
                         lambda ans, d, m, s: _DEGREE / 3600.0 + 0.0 * ans)
    scipy_round = nondifferentiable(sc.round)
    # ζ(x) - 1: ζ' as Riemann's zeta (Euler-Maclaurin, or its reflection below -½).
    zetac = elementwise(sc.zetac, lambda ans, x: scipy_special.riemann_zeta.partials[0](ans, x))
    erfi = elementwise(sc.erfi, lambda ans, x: _TWO_OVER_SQRT_PI * exp(x * x))
    expm1.complex_ok = log1p_.complex_ok = erfi.complex_ok = True  # holomorphic
    # inv_boxcox(y, λ) = exp(L), L = log1p(λy)/λ: ∂y = exp((1 - λ)·L), ∂λ = exp(L)·∂L/∂λ.
    inv_boxcox = elementwise(
        sc.inv_boxcox, lambda ans, y, lmbda: exp((1.0 - lmbda) * _inv_boxcox_log(y, lmbda)),
        lambda ans, y, lmbda: ans * _inv_boxcox_dlambda(y, lmbda))
    inv_boxcox1p = elementwise(
        sc.inv_boxcox1p,
        lambda ans, y, lmbda: exp((1.0 - lmbda) * _inv_boxcox_log(y, lmbda)),
        lambda ans, y, lmbda: exp(_inv_boxcox_log(y, lmbda)) * _inv_boxcox_dlambda(y, lmbda))
    # huber(δ, r): r²/2 for |r| ≤ δ, δ(|r| - δ/2) outside; C¹, its second derivatives
    # jump at |r| = δ, where clip and maximum take the midpoint (½).
    huber = elementwise(sc.huber, lambda ans, delta, r: maximum(absolute(r) - delta, 0.0),
                        lambda ans, delta, r: clip(r, -delta, delta))
    pseudo_huber = elementwise(sc.pseudo_huber,
                               lambda ans, delta, r: _pseudo_huber_ddelta(delta, r),
                               lambda ans, delta, r: _pseudo_huber_dr(delta, r))

    # -- Bessel functions ----------------------------------------------------------------
    k0 = elementwise(sc.k0, lambda ans, x: -k1(x))
    k1 = elementwise(sc.k1, lambda ans, x: -k0(x) - ans / x)

    def _k0e_partial(ans, x):
        far, series = _kve_far(0.0, x)
        return where(far, series, ans - k1e(where(far, 1.0, x)))

    def _k1e_partial(ans, x):
        far, series = _kve_far(1.0, x)
        xn = where(far, 1.0, x)
        return where(far, series, ans - k0e(xn) - ans / xn)

    k0e = elementwise(sc.k0e, _k0e_partial)
    k1e = elementwise(sc.k1e, _k1e_partial)
    kn = elementwise(sc.kn, _no_partial("kn", "n"),
                     lambda ans, n, x: -0.5 * (kn(n - 1.0, x) + kn(n + 1.0, x)))
    # Scaled by e^(-|Im x|): for real x jve, yve are jv, yv (and their recurrences).
    jve = elementwise(sc.jve, _no_partial("jve", "v"),
                      lambda ans, v, x: 0.5 * (jve(v - 1.0, x) - jve(v + 1.0, x)))
    yve = elementwise(sc.yve, _no_partial("yve", "v"),
                      lambda ans, v, x: 0.5 * (yve(v - 1.0, x) - yve(v + 1.0, x)))

    def _kve_partial(ans, v, x):
        far, series = _kve_far(v, x)
        xn = where(far, 1.0, x)
        return where(far, series, ans - 0.5 * (kve(v - 1.0, xn) + kve(v + 1.0, xn)))

    kve = elementwise(sc.kve, _no_partial("kve", "v"), _kve_partial)

    # -- Distribution functions: their densities ------------------------------------------
    # chdtr(v, x) = gammainc(v/2, x/2); gdtr(a, b, x) = gammainc(b, a·x) (a the rate).
    chdtr = elementwise(sc.chdtr, _no_partial("chdtr", "v"),
                        lambda ans, v, x: 0.5 * _gamma_pdf(0.5 * v, 0.5 * x))
    chdtrc = elementwise(sc.chdtrc, _no_partial("chdtrc", "v"),
                         lambda ans, v, x: -0.5 * _gamma_pdf(0.5 * v, 0.5 * x))
    gdtr = elementwise(sc.gdtr, lambda ans, a, b, x: x * _gamma_pdf(b, a * x),
                       _no_partial("gdtr", "b"),
                       lambda ans, a, b, x: a * _gamma_pdf(b, a * x))
    gdtrc = elementwise(sc.gdtrc, lambda ans, a, b, x: -x * _gamma_pdf(b, a * x),
                        _no_partial("gdtrc", "b"),
                        lambda ans, a, b, x: -a * _gamma_pdf(b, a * x))
    # bdtr(k, n, p) = I_{1-p}(n - k, k + 1), nbdtr(k, n, p) = I_p(n, k + 1), k and n
    # truncated: in p minus and plus a beta density.
    bdtr = elementwise(sc.bdtr, _no_partial("bdtr", "k"), _no_partial("bdtr", "n"),
                       lambda ans, k, n, p: -_beta_pdf(
                           floor(primal_value(k)) + 1.0,
                           floor(primal_value(n)) - floor(primal_value(k)), p))
    nbdtr = elementwise(sc.nbdtr, _no_partial("nbdtr", "k"), _no_partial("nbdtr", "n"),
                        lambda ans, k, n, p: _beta_pdf(
                            floor(primal_value(n)), floor(primal_value(k)) + 1.0, p))

    for _prim in (exprel, cosm1, powm1, sindg, cosdg, tandg, cotdg, radian, zetac, erfi,
                  inv_boxcox, inv_boxcox1p, huber, pseudo_huber, k0, k1, k0e, k1e, kn, jve,
                  yve, kve, chdtr, chdtrc, gdtr, gdtrc, bdtr, nbdtr):  # JAX has none of these
        _prim.kernels["jax"] = _host_kernel(_prim.kernels["numpy"])
    del _prim
    globals().update(locals(), __all__=list(_DECLARED_NAMES))


__all__: list[str] = []  # the names below, once declared
_DECLARED_NAMES = (
    "bdtr", "cbrt", "chdtr", "chdtrc", "cosdg", "cosm1", "cotdg", "erfi", "expm1", "exprel",
    "gdtr", "gdtrc", "huber", "inv_boxcox", "inv_boxcox1p", "jve", "k0", "k0e", "k1", "k1e",
    "kn", "kve", "log1p_", "nbdtr", "powm1", "pseudo_huber", "radian", "scipy_round", "sindg",
    "tandg", "yve", "zetac",
)
