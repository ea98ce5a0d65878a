"""First and second derivatives of scipy.special's rules inside their whole real domains.

tests/test_special_edges.py differentiates each unary rule at the edges of its domain
(huge and tiny magnitudes); here the points are those inside a domain where a rule's
formula loses digits: next to the poles of Γ and ψ (SciPy's psi loses ~1e-16/distance
there, so Γ' = Γψ and log|Γ|' = ψ take ψ by reflection), far out where a recurrence
cancels (ive's ½(ive(v-1) + ive(v+1)) - ive(v), the Faddeeva function's -2z·w + 2i/√π:
asymptotic series there), where a phase rounds (fresnel's sin(πx²/2): x² reduced
mod 4 exactly), and where 1 + (z - 1), x² or 1 - x rounds (spence next to 0, arccosh
above 1.3e154, Riemann's ζ by reflection next to 0⁻). They were found by a probe of
every registered real special function against mpmath (log-spaced magnitudes from
1e-300 to the overflow, both signs, the zeros and poles of each function and of its
derivatives).

References, tolerance and modes are those of test_special_edges.py: closed forms
evaluated by mpmath at 60 digits or more (``digits`` more per decade of |x|, for
closed forms that cancel or a phase x² that needs them), relative ``RTOL`` = 1e-9,
every point by hyper-duals, forward-over-reverse and forward-over-forward (and the
first derivative forward and reverse); a NaN or an infinity is never accepted.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_special_edges import ATOL, MODES, RTOL, _dawsn, _dualad, _reference

import dualad

sc = pytest.importorskip("scipy.special")
mpmath = pytest.importorskip("mpmath")
mp = mpmath.mp

# Next to the poles of Γ: -n + δ, δ down to 1e-14 (the double nearest), and between them.
POLES = [-0.99999999999999, -0.9999999999, -1.99999999999998, -2.9999999997,
         -9.9999999999999, -49.999999995, -99.999999999999, -169.9999999999983, -1e-100]
BETWEEN = [-0.5, -1.5, -2.25, -170.5, -1e8 - 0.5]


def _gamma1(x):
    return mp.gamma(x) * mp.psi(0, x)


def _gamma2(x):
    return mp.gamma(x) * (mp.psi(0, x) ** 2 + mp.psi(1, x))


def _trigamma(x):
    """ψ₁(x); far left by the reflection ψ₁(x) = π²/sin²(πx) - ψ₁(1 - x) (mpmath's own
    recurrence takes minutes at -1e8)."""
    return mp.psi(1, x) if x > -1000 else (mp.pi / mp.sinpi(x)) ** 2 - mp.psi(1, 1 - x)


def _fresnel(which):
    """d/dx and d²/dx² of fresnel's S (``which`` 0) or C (1): sin/cos(πx²/2) and its
    derivative, at as many digits as x² needs (``digits`` 2 per decade)."""
    trig, dtrig = (mp.sin, mp.cos) if which == 0 else (mp.cos, lambda t: -mp.sin(t))
    return (lambda x: trig(mp.pi * x * x / 2),
            lambda x: mp.pi * x * dtrig(mp.pi * x * x / 2))


def _ive(v, order):
    """d/dx, d²/dx² of e^(-|x|)·I_v(x): I' = ½(I₋ + I₊), I'' = ¼(I₋₂ + 2I + I₊₂)."""
    def derivative(x):
        s, i = mp.sign(x), lambda n: mp.re(mp.besseli(v + n, x))
        d1 = (i(-1) + i(1)) / 2
        if order == 1:
            return mp.exp(-abs(x)) * (d1 - s * i(0))
        d2 = (i(-2) + 2 * i(0) + i(2)) / 4
        return mp.exp(-abs(x)) * (d2 - 2 * s * d1 + i(0))
    return derivative


def _wofz_imag(order):
    """Im w(x) = 2/√π·F(x), F Dawson's: F' = 1 - 2xF, F'' = -2F - 2xF'."""
    def derivative(x):
        f = _dawsn(x)
        d1 = 1 - 2 * x * f
        return 2 / mp.sqrt(mp.pi) * (d1 if order == 1 else -2 * f - 2 * x * d1)
    return derivative


def _wofz_real(order):  # Re w(x) = exp(-x²)
    return lambda x: (-2 * x if order == 1 else 4 * x * x - 2) * mp.exp(-x * x)


_ENVELOPES = (lambda x: 1.0, lambda x: math.pi * abs(x))
IVE_FAR = [49.0, 51.0, 401.0, 1e5, 1e8]
FRESNEL = [3.0, 1e4, -1e4, 12345.678, 3e7 + 0.25, -123456789.123, 2.0 ** 54 + 4.0, 1e20,
           -1e200]

# name: (function, f', f'', points, digits); a fresnel row adds the envelopes of f' and
# f'' (1 and π|x|): where the true value is 0 (x² ≡ 0 mod 4), rounding against them.
ROWS = {
    "gamma near its poles": (sc.gamma, _gamma1, _gamma2, POLES + BETWEEN[:-1], 0),
    "gammaln near its poles": (sc.gammaln, lambda x: mp.psi(0, x), _trigamma,
                               POLES + BETWEEN, 0),
    "digamma near its poles": (sc.digamma, lambda x: mp.psi(1, x), lambda x: mp.psi(2, x),
                               POLES[1:] + BETWEEN[:-1], 0),
    "fresnel S": (lambda x: sc.fresnel(x)[0], *_fresnel(0), FRESNEL, 2, _ENVELOPES),
    "fresnel C": (lambda x: sc.fresnel(x)[1], *_fresnel(1), FRESNEL, 2, _ENVELOPES),
    "wofz real part": (lambda x: np.real(sc.wofz(x)), _wofz_real(1), _wofz_real(2),
                       [3.0, 19.0, 21.0, 25.0, -25.0], 0),
    "wofz imaginary part": (lambda x: np.imag(sc.wofz(x)), _wofz_imag(1), _wofz_imag(2),
                            [3.0, 19.0, 21.0, 25.0, -1e3, 1e6], 4),
}
ROWS.update({
    # log(z)/(1 - z): -log1p(z - 1)/(z - 1) was -inf below z = 1e-16 (1 + (z - 1) rounds)
    "spence, small z": (sc.spence, lambda z: mp.log(z) / (1 - z),
                        lambda z: 1 / (z * (1 - z)) + mp.log(z) / (1 - z) ** 2,
                        [1e-300, 1e-100, 1e-17, 1e-8, 0.49, 0.51, 1 - 1e-10, 1 + 1e-10], 0),
    # ζ(x) by reflection was F(x)·ζ(1 - x) = 0·∞ next to 0⁻ (nan at -1e-300, 413 at -1e-10)
    "riemann zeta next to 0": (sc.zeta, lambda x: mp.zeta(x, 1, 1), lambda x: mp.zeta(x, 1, 2),
                               [-1e-300, -1e-10, -0.3, -0.5, -0.6, 1e-300, -20.5], 0),
    # 1/√((x - 1)(x + 1)) overflowed to 0 from x = 1.3e154 on
    "arccosh, huge x": (np.arccosh, lambda x: 1 / mp.sqrt(x * x - 1),
                        lambda x: -x / (x * x - 1) ** 1.5, [1e10, 1e160, 1e300, 1.7e308], 0),
})
for _v in (0.5, 1.0, 2.0, -2.7, 10.0):
    _points = IVE_FAR + ([-1e3, -60.0] if _v == int(_v) else [])
    ROWS[f"ive({_v}, x), large x"] = (lambda x, v=_v: sc.ive(v, x), _ive(_v, 1), _ive(_v, 2),
                                      _points, 2)


# -- dualad.rules.scipy_special_extra --------------------------------------------------
def _deg():
    return mp.pi / 180


def _k(v, n=0):
    """d^n/dx^n of K_v (n ≤ 2): K' = -(K₋ + K₊)/2, K'' = (K₋₂ + 2K + K₊₂)/4."""
    if n == 0:
        return lambda x: mp.besselk(v, x)
    if n == 1:
        return lambda x: -(mp.besselk(v - 1, x) + mp.besselk(v + 1, x)) / 2
    return lambda x: (mp.besselk(v - 2, x) + 2 * mp.besselk(v, x) + mp.besselk(v + 2, x)) / 4


def _ke(v, order):
    """d/dx, d²/dx² of eˣ·K_v(x)."""
    if order == 1:
        return lambda x: mp.exp(x) * (_k(v)(x) + _k(v, 1)(x))
    return lambda x: mp.exp(x) * (_k(v)(x) + 2 * _k(v, 1)(x) + _k(v, 2)(x))


def _gamma_cdf_x(b, s, order):
    """d/dy, d²/dy² of gammainc(b, s·y)."""
    def derivative(y):
        b_, s_ = mp.mpf(b), mp.mpf(s)
        g = s_ * mp.exp(-s_ * y) / mp.gamma(b_)
        if order == 1:
            return g * (s_ * y) ** (b_ - 1)
        return g * s_ * ((b_ - 1) * (s_ * y) ** (b_ - 2) - (s_ * y) ** (b_ - 1))
    return derivative


def _beta_cdf_p(a, b, sign, order):
    """d/dp, d²/dp² of ±I_p(a, b)."""
    def derivative(p):
        c = sign / mp.beta(a, b)
        if order == 1:
            return c * p ** (a - 1) * (1 - p) ** (b - 1)
        return c * ((a - 1) * p ** (a - 2) * (1 - p) ** (b - 1)
                    - (b - 1) * p ** (a - 1) * (1 - p) ** (b - 2))
    return derivative


def _diff(f, n):
    """mpmath's n-th derivative of f (at the working precision)."""
    return lambda x: mp.diff(f, x, n)


def _inv_boxcox_in_lambda(y):
    return lambda t: mp.exp(mp.log1p(t * y) / t) if t else mp.exp(y)


def _pseudo_huber(delta, order):
    """d/dr, d²/dr² of δ²(√(1 + (r/δ)²) - 1): rδ/h, δ³/h³ (h = hypot(δ, r)); for
    ``delta`` None d/dδ, d²/dδ² at r = 1: (h - δ)²/h, -(h - δ)²(2h + δ)/h³."""
    def derivative(t):
        d, r = (mp.mpf(delta), t) if delta is not None else (t, mp.one)
        h = mp.hypot(d, r)
        if delta is not None:
            return r * d / h if order == 1 else (d / h) ** 3
        q = r * r / (h + d)  # h - δ
        return q * q / h if order == 1 else -q * q * (2 * h + d) / h ** 3
    return derivative


_EXPREL1 = lambda x: (x * mp.exp(x) - mp.expm1(x)) / x ** 2  # noqa: E731
_EXPREL2 = lambda x: (x * x * mp.exp(x) - 2 * x * mp.exp(x) + 2 * mp.expm1(x)) / x ** 3  # noqa: E731
KE_POINTS = [1e-8, 1.0, 49.0, 51.0, 63.0, 65.0, 399.0, 401.0, 1e5, 1e10]
ROWS.update({
    "expm1": (sc.expm1, mp.exp, mp.exp, [-1e-300, 1e-300, -1e-8, 1e-8, -700.0, 709.0, 3.0], 0),
    "log1p": (sc.log1p, lambda x: 1 / (1 + x), lambda x: -1 / (1 + x) ** 2,
              [-1e-300, 1e-300, 1e-8, -1 + 1e-10, 1e10, 1e300], 0),
    "cbrt": (sc.cbrt, lambda x: 1 / (3 * mp.cbrt(abs(x)) ** 2),
             lambda x: -2 * mp.sign(x) / (9 * mp.cbrt(abs(x)) ** 5),
             [-1e-150, 1e-8, -1e-8, 2.0, -1e10, 1e300], 0),
    # (eˣ - exprel)/x, exprel·(1 - 1/x) + 1/x, the series for |x| < 1
    "exprel": (sc.exprel, _EXPREL1, _EXPREL2,
               [-1e-300, 1e-300, -1e-8, 1e-8, 0.5, 0.999, 1.0, 1.001, -0.999, -1.0, -1.001,
                30.0, 700.0, -1e8, -1e300], 3),
    "cosm1": (sc.cosm1, lambda x: -mp.sin(x), lambda x: -mp.cos(x),
              [-1e-300, 1e-8, 3.0, 1e10, -1e300], 1),
    "sindg": (sc.sindg, lambda x: _deg() * mp.cos(_deg() * x),
              lambda x: -_deg() ** 2 * mp.sin(_deg() * x),
              [1e-300, 45.0, 89.99999999, 270.25, -1e8 + 0.5, 1e10], 1),
    "cosdg": (sc.cosdg, lambda x: -_deg() * mp.sin(_deg() * x),
              lambda x: -_deg() ** 2 * mp.cos(_deg() * x),
              [1e-300, 45.0, 89.99999999, 270.25, -1e8 + 0.5, 1e10], 1),
    # (SciPy's tandg and cotdg lose digits next to their poles: k/cosdg², -k/sindg²)
    "tandg": (sc.tandg, lambda x: _deg() / mp.cos(_deg() * x) ** 2,
              lambda x: 2 * _deg() ** 2 * mp.sin(_deg() * x) / mp.cos(_deg() * x) ** 3,
              [1e-300, 45.0, 89.99999999, -89.99999999, 135.0, 1e10], 1),
    "cotdg": (sc.cotdg, lambda x: -_deg() / mp.sin(_deg() * x) ** 2,
              lambda x: 2 * _deg() ** 2 * mp.cos(_deg() * x) / mp.sin(_deg() * x) ** 3,
              [1e-100, 1e-8, 45.0, 90.5, 179.999999999, 1e10 + 1.0], 1),
    "zetac": (sc.zetac, lambda x: mp.zeta(x, 1, 1), lambda x: mp.zeta(x, 1, 2),
              [1 + 1e-8, 1 - 1e-8, 0.5, 3.0, 50.0, 1000.0, -0.3, -1e-300, 1e-300, -20.5], 0),
    "erfi": (sc.erfi, lambda x: 2 / mp.sqrt(mp.pi) * mp.exp(x * x),
             lambda x: 4 * x / mp.sqrt(mp.pi) * mp.exp(x * x), [-1e-300, 1e-8, 3.0, 26.0, -26.0],
             0),
    "k0": (sc.k0, _k(0, 1), _k(0, 2), [1e-150, 1e-8, 1.0, 30.0, 700.0], 0),
    "k1": (sc.k1, _k(1, 1), _k(1, 2), [1e-100, 1e-8, 1.0, 30.0, 700.0], 0),
    "k0e": (sc.k0e, _ke(0, 1), _ke(0, 2), [1e-150] + KE_POINTS + [1e300], 0),
    "k1e": (sc.k1e, _ke(1, 1), _ke(1, 2), [1e-100] + KE_POINTS + [1e300], 0),
    "kn(3, x)": (lambda x: sc.kn(3, x), _k(3, 1), _k(3, 2), [1e-50, 1e-8, 1.0, 30.0, 600.0], 0),
    "chdtr(3, x)": (lambda x: sc.chdtr(3.0, x), _gamma_cdf_x(1.5, 0.5, 1),
                    _gamma_cdf_x(1.5, 0.5, 2), [1e-300, 1e-8, 5.0, 100.0, 1e3], 0),
    "chdtr(1, x)": (lambda x: sc.chdtr(1.0, x), _gamma_cdf_x(0.5, 0.5, 1),
                    _gamma_cdf_x(0.5, 0.5, 2), [1e-100, 1e-8, 5.0, 100.0, 1e3], 0),
    "gdtr(2, 2.5, x)": (lambda x: sc.gdtr(2.0, 2.5, x), _gamma_cdf_x(2.5, 2.0, 1),
                        _gamma_cdf_x(2.5, 2.0, 2), [1e-300, 1e-8, 1.5, 100.0], 0),
    "gdtr(a, 2.5, 1.5)": (lambda a: sc.gdtr(a, 2.5, 1.5), _gamma_cdf_x(2.5, 1.5, 1),
                          _gamma_cdf_x(2.5, 1.5, 2), [1e-300, 1e-8, 1.5, 100.0], 0),
    "gdtr(1, 150, x)": (lambda x: sc.gdtr(1.0, 150.0, x), _gamma_cdf_x(150, 1, 1),
                        _gamma_cdf_x(150, 1, 2), [0.9, 1.1, 150.0], 0),
    "bdtr(2, 6, p)": (lambda p: sc.bdtr(2, 6, p), _beta_cdf_p(3, 4, -1, 1),
                      _beta_cdf_p(3, 4, -1, 2), [1e-300, 1e-8, 0.3, 0.5, 0.7, 1 - 1e-10], 0),
    "nbdtr(2, 6, p)": (lambda p: sc.nbdtr(2, 6, p), _beta_cdf_p(6, 3, 1, 1),
                       _beta_cdf_p(6, 3, 1, 2), [1e-300, 1e-8, 0.5, 1 - 1e-10], 0),
    # ∂/∂λ by its series for |λy| < 0.1
    "inv_boxcox(1.5, lmbda)": (lambda t: sc.inv_boxcox(1.5, t),
                               _diff(_inv_boxcox_in_lambda(1.5), 1),
                               _diff(_inv_boxcox_in_lambda(1.5), 2),
                               [1e-300, -1e-300, 1e-8, 0.05, 0.067, 0.068, -0.068, 3.0, -0.6], 2),
    "inv_boxcox(y, 0.5)": (lambda y: sc.inv_boxcox(y, 0.5), lambda y: 1 + y / 2,
                           lambda y: mp.mpf(0.5), [1e-300, -1.9, 5.0, 1e10], 0),
    "inv_boxcox1p(y, 0.5)": (lambda y: sc.inv_boxcox1p(y, 0.5), lambda y: 1 + y / 2,
                             lambda y: mp.mpf(0.5), [1e-300, -1e-8, -1.9, 5.0], 0),
    "powm1(x, 2.5)": (lambda x: sc.powm1(x, 2.5), lambda x: 2.5 * x ** 1.5,
                      lambda x: 3.75 * x ** 0.5, [1e-300, 1e-8, 1.0, 1e10], 0),
    "powm1(1.5, y)": (lambda y: sc.powm1(1.5, y), lambda y: mp.mpf(1.5) ** y * mp.log(1.5),
                      lambda y: mp.mpf(1.5) ** y * mp.log(1.5) ** 2, [1e-300, -1e-8, 1.0, 100.0],
                      0),
    # rδ/h and (h - δ)²/h written so that their derivatives do not cancel (1/h - r²/h³)
    "pseudo_huber(1e-3, r)": (lambda r: sc.pseudo_huber(1e-3, r), _pseudo_huber(1e-3, 1),
                              _pseudo_huber(1e-3, 2),
                              [1e-300, 1e-8, -0.5e-3, 2e-3, 1e5, -1e8, 1e200], 0),
    "pseudo_huber(delta, 1)": (lambda d: sc.pseudo_huber(d, 1.0), _pseudo_huber(None, 1),
                               _pseudo_huber(None, 2),
                               [1e-300, 1e-8, 0.5, 2.0, 1e5, 1e8, 1e200], 0),
})
for _v in (0.3, 2.5, 4.0, 10.0):
    # (mpmath's K of orders v ± 2 lose digits at x = 1e10: its derivatives of eˣ·K_v)
    _ke_v = (lambda x, v=_v: mp.exp(x) * mp.besselk(v, x))
    ROWS[f"kve({_v}, x)"] = (lambda x, v=_v: sc.kve(v, x), _diff(_ke_v, 1), _diff(_ke_v, 2),
                             KE_POINTS, 0)


def _failures(got, want, x, mode, envelope=0.0):
    if math.isfinite(got) and abs(got - want) <= RTOL * max(abs(want), envelope) + ATOL:
        return []
    return [f"x={x!r} {mode}: {got!r}, mpmath {want!r}"]


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("f, first, second, points, digits, envelopes",
                         [pytest.param(*row[:5], row[5] if len(row) > 5 else None, id=name)
                          for name, row in ROWS.items()])
def test_derivatives_across_the_domain(f, first, second, points, digits, envelopes):
    failures = []
    for x in points:
        want1, want2 = _reference(first, x, digits), _reference(second, x, digits)
        assert math.isfinite(want1) and math.isfinite(want2), f"reference at x={x!r}"
        e1, e2 = (envelope(x) for envelope in envelopes) if envelopes else (0.0, 0.0)
        with np.errstate(over="ignore"):
            failures += _failures(float(dualad.derivative(f)(np.float64(x))), want1, x,
                                  "forward", e1)
            failures += _failures(float(dualad.grad(f)(np.float64(x))), want1, x, "reverse",
                                  e1)
        for mode in MODES:
            failures += _failures(_dualad(f, x, mode), want2, x, mode, e2)
    assert not failures, "\n".join(failures)


WOFZ_COMPLEX = [30 + 10j, -50 - 5j, 1e3 + 1j, 25 - 3j, 30 + 20j, 2 + 3j]


@pytest.mark.parametrize("z", WOFZ_COMPLEX)
def test_wofz_complex_derivative(z):
    """w'(z) off the real axis: the asymptotic series within |Im z| < |Re z|/2, the
    recurrence outside (30 + 20j, 2 + 3j)."""
    with mp.workdps(60):
        want = complex(-2 * z * mp.exp(-z * z) * mp.erfc(-1j * mp.mpc(z))
                       + 2j / mp.sqrt(mp.pi))
    got = complex(dualad.derivative(sc.wofz)(np.complex128(z)))
    assert abs(got - want) <= RTOL * abs(want), (got, want)

