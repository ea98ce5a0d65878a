"""Second derivatives of the unary elementwise rules at the edges of their domains.

tests/test_special.py checks first and second derivatives against mpmath at ordinary
points; here every unary elementwise rule of NumPy and of scipy.special (and the binary
ones with one argument held constant) is differentiated twice at the edges of its
domain: huge and tiny magnitudes (±1e-300, ±1e-8, ±700, ±1e10, ±1e300 where the
function is finite) and points just inside a singularity (1 - 1e-12 for arctanh,
1 + 1e-10 for arccosh). Each point is differentiated three ways, hyper-duals
(``hessian(mode="hyperdual")``), forward-over-reverse (``hessian(mode="fwd-rev")``)
and ``derivative(derivative(f))``, and compared with the second derivative's closed form
evaluated by mpmath at 60 digits or more (more where the closed form cancels).

Tolerance: relative ``RTOL`` = 1e-9, with an absolute floor ``ATOL`` of a few times the
smallest normal double, which matters only where the true value underflows; a NaN or
an infinity is never accepted (every point's true second derivative is finite and
representable, which the test asserts of the reference too).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dualad

sc = pytest.importorskip("scipy.special")
mpmath = pytest.importorskip("mpmath")
mp = mpmath.mp

RTOL = 1e-9
ATOL = 16 * np.finfo(np.float64).tiny  # ≈ 3.6e-307: below it, values have underflowed
MODES = ("hyperdual", "fwd-rev", "nested")

TINY = [-1e-300, 1e-300, -1e-8, 1e-8]
RGAMMA_ZEROS = [-1.0, -1.0 + 1e-15, -1.0 + 1e-8, -2.0, -2.0 - 1e-9, -3.0, -50.0, -0.5, -0.26,
                -0.24, -30.25]
WIDE = TINY + [-700.0, 700.0, -1e10, 1e10, -1e300, 1e300]
# ---------------------------------------------------------------------------
# References: the second derivative in closed form, of an mpf at the working precision
# ---------------------------------------------------------------------------

def _sech2(x):
    return 1 / mp.cosh(x) ** 2


def _expit_pair(x):
    return 1 / (1 + mp.exp(-x)), 1 / (1 + mp.exp(x))  # s(x), s(-x) = 1 - s(x)


def _expit2(x):
    s, t = _expit_pair(x)
    return -s * t * mp.tanh(x / 2)  # s·(1 - s)·(1 - 2s)


def _erfcx(x):
    """exp(x²)·erfc(x); for x > 1e5 its asymptotic series, summed to the precision."""
    if x < 1e5:
        return mp.exp(x * x) * mp.erfc(x)
    total, term, n = mp.mpf(0), mp.mpf(1), 0
    while abs(term) > mp.eps * 1e-5:
        total += term
        n += 1
        term *= -(2 * n - 1) / (2 * x * x)
    return total / (x * mp.sqrt(mp.pi))


def _erfcx2(x):
    f = _erfcx(x)
    return 2 * f + 2 * x * (2 * x * f - 2 / mp.sqrt(mp.pi))


def _dawsn(x):
    """F(x) = √π/2·exp(-x²)·erfi(x); for |x| > 1e5 its asymptotic series."""
    if abs(x) < 1e5:
        return mp.sqrt(mp.pi) / 2 * mp.exp(-x * x) * mp.erfi(x)
    total, term, n = mp.mpf(0), mp.mpf(1), 0
    while abs(term) > mp.eps * 1e-5:
        total += term
        n += 1
        term *= (2 * n - 1) / (2 * x * x)
    return total / (2 * x)


def _dawsn2(x):
    f = _dawsn(x)
    return -2 * f - 2 * x * (1 - 2 * x * f)


def _log_ndtr2(x):
    # f' = φ/Φ = √(2/π)/erfcx(-x/√2), f'' = -f'·(x + f')
    d1 = mp.sqrt(2 / mp.pi) / _erfcx(-x / mp.sqrt(2))
    return -d1 * (x + d1)


def _inverse(f, df, y, x0):
    """x with f(x) = y, by Newton's method from a double's guess."""
    x = mp.mpf(x0)
    for _ in range(8):
        x -= (f(x) - y) / df(x)
    return x


def _ndtri2(p):
    x = _inverse(mp.ncdf, mp.npdf, p, sc.ndtri(float(p)))
    return x / mp.npdf(x) ** 2


def _erfinv2(y):
    a = mp.erfinv(y)
    d1 = mp.sqrt(mp.pi) / 2 * mp.exp(a * a)
    return 2 * a * d1 * d1


def _erfcinv2(y):
    a = _inverse(mp.erfc, lambda t: -2 / mp.sqrt(mp.pi) * mp.exp(-t * t), y,
                 sc.erfcinv(float(y)))
    return mp.pi / 2 * a * mp.exp(2 * a * a)


def _i0e2(x):
    # e^{-x}(2I0 - 2I1 - I1/x) for x > 0; even
    x = abs(x)
    i0, i1 = mp.besseli(0, x), mp.besseli(1, x)
    return mp.exp(-x) * (2 * i0 - 2 * i1 - i1 / x)


def _i1e2(x):
    # e^{-x}(2I1 - 2I0 - I0/x + 2I1/x + 2I1/x²) for x > 0; odd
    s, x = mp.sign(x), abs(x)
    i0, i1 = mp.besseli(0, x), mp.besseli(1, x)
    return s * mp.exp(-x) * (2 * i1 - 2 * i0 - i0 / x + 2 * i1 / x + 2 * i1 / x ** 2)


def _rgamma2(x):
    # 1/Γ(x) = x·r(1+x): r'' (x) = 2r'(1+x) + x·r''(1+x), r' = -rψ, r'' = r(ψ² - ψ₁)
    y = 1 + x
    r, psi, psi1 = mp.rgamma(y), mp.psi(0, y), mp.psi(1, y)
    return -2 * r * psi + x * r * (psi * psi - psi1)


# name: (function of a float64 or a Dual, f'' as a function of an mpf, points, digits)
# ``digits``: extra working digits per decade of |x| (for closed forms that cancel).
UNARY = {
    # NumPy: exponentials and logarithms
    "exp": (np.exp, mp.exp, [-1e-300, 1e-8, -700.0, 700.0, 709.0], 0),
    "expm1": (np.expm1, mp.exp, [-1e-300, 1e-300, -1e-8, 1e-8, -700.0, 700.0, -1e10], 0),
    "exp2": (np.exp2, lambda x: mp.ln2 ** 2 * 2 ** x, [-1e-300, 1e-8, -1000.0, 1000.0], 0),
    "log": (np.log, lambda x: -1 / x ** 2, [1e-150, 1e-8, 700.0, 1e10, 1e150, 1e300], 0),
    "log2": (np.log2, lambda x: -1 / (x ** 2 * mp.ln2), [1e-150, 1e-8, 1e10, 1e150], 0),
    "log10": (np.log10, lambda x: -1 / (x ** 2 * mp.ln10), [1e-150, 1e-8, 1e10, 1e150], 0),
    "log1p": (np.log1p, lambda x: -1 / (1 + x) ** 2,
              [-1 + 1e-12, -1e-300, 1e-300, -1e-8, 1e-8, 1e10, 1e150, 1e300], 0),
    "sqrt": (np.sqrt, lambda x: -x ** -1.5 / 4, [1e-200, 1e-8, 1e10, 1e200, 1e300], 0),
    "cbrt": (np.cbrt, lambda x: -mp.sign(x) * 2 * abs(x) ** (-mp.mpf(5) / 3) / 9,
             [-1e-180, 1e-180, -1e-8, 1e-8, 1e10, -1e180, 1e300], 0),
    # powers with a constant exponent or base
    "x**2.5": (lambda x: x ** 2.5, lambda x: 3.75 * x ** 0.5, [1e-300, 1e-8, 1e10, 1e120], 0),
    "x**-1.5": (lambda x: x ** -1.5, lambda x: 3.75 * x ** -3.5, [1e-80, 1e-8, 1e10, 1e300],
                0),
    "x**3": (lambda x: x ** 3.0, lambda x: 6 * x, [-1e-300, 1e-8, -1e10, 1e100], 0),
    "2**x": (lambda x: np.power(2.0, x), lambda x: mp.ln2 ** 2 * 2 ** x,
             [-1e-300, 1e-8, -1000.0, 1000.0], 0),
    "square": (np.square, lambda x: mp.mpf(2), [-1e-300, 1e-8, -1e10, 1e150], 0),
    "reciprocal": (np.reciprocal, lambda x: 2 / x ** 3,
                   [-1e-100, 1e-100, 1e-8, -1e10, 1e100], 0),
    # trigonometric and hyperbolic
    "sin": (np.sin, lambda x: -mp.sin(x), [-1e-300, 1e-8, 1e10, 1e300], 0),
    "cos": (np.cos, lambda x: -mp.cos(x), [-1e-300, 1e-8, 1e10, 1e300], 0),
    "tan": (np.tan, lambda x: 2 * mp.tan(x) / mp.cos(x) ** 2,
            [-1e-300, 1e-8, 1.5707963267948966, -1.5707963267, 1e10, 1e300], 0),
    "arcsin": (np.arcsin, lambda x: x / (1 - x * x) ** 1.5,
               [-1e-300, 1e-8, 1 - 1e-12, -1 + 1e-12, 1 - 2 ** -53], 0),
    "arccos": (np.arccos, lambda x: -x / (1 - x * x) ** 1.5,
               [-1e-300, 1e-8, 1 - 1e-12, -1 + 1e-12, 1 - 2 ** -53], 0),
    "arctan": (np.arctan, lambda x: -2 * x / (1 + x * x) ** 2, WIDE[:-2] + [1e100, -1e100], 0),
    # (710: the Hessian's symmetrisation ½H + ½Hᵀ must not overflow near the largest float)
    "sinh": (np.sinh, mp.sinh, [-1e-300, 1e-8, -700.0, 710.0], 0),
    "cosh": (np.cosh, mp.cosh, [-1e-300, 1e-8, -700.0, 710.0], 0),
    "tanh": (np.tanh, lambda x: -2 * mp.tanh(x) * _sech2(x),
             [-1e-300, 1e-8, -20.0, 300.0, -350.0], 0),
    "arcsinh": (np.arcsinh, lambda x: -x / (1 + x * x) ** 1.5,
                TINY + [-1e10, 1e10, 1e100, -1e150], 0),
    "arccosh": (np.arccosh, lambda x: -x / (x * x - 1) ** 1.5,
                [1 + 1e-10, 1 + 2 ** -52, 700.0, 1e10, 1e100, 1e150], 0),
    "arctanh": (np.arctanh, lambda x: 2 * x / (1 - x * x) ** 2,
                TINY + [1 - 1e-12, -1 + 1e-12, 1 - 2 ** -53], 0),
    # binary, one argument constant
    "logaddexp(x, 0)": (lambda x: np.logaddexp(x, 0.0),
                        lambda x: _expit_pair(x)[0] * _expit_pair(x)[1],
                        WIDE[:-2] + [-40.0, 40.0], 0),
    "logaddexp(1, x)": (lambda x: np.logaddexp(1.0, x),
                        lambda x: _expit_pair(x - 1)[0] * _expit_pair(x - 1)[1],
                        [-700.0, -40.0, 1.0, 41.0, 700.0], 0),
    "logaddexp2(x, 0)": (lambda x: np.logaddexp2(x, 0.0),
                         lambda x: mp.ln2 * _expit_pair(x * mp.ln2)[0]
                         * _expit_pair(x * mp.ln2)[1], [-1000.0, -50.0, 1e-8, 50.0, 1000.0], 0),
    "hypot(x, 1)": (lambda x: np.hypot(x, 1.0), lambda x: (1 + x * x) ** -1.5,
                    TINY + [-1e10, 1e10, 1e100], 0),
    "hypot(2, x)": (lambda x: np.hypot(2.0, x), lambda x: 4 * (4 + x * x) ** -1.5,
                    TINY + [-1e10, 1e10, 1e100], 0),
    "arctan2(x, 1)": (lambda x: np.arctan2(x, 1.0), lambda x: -2 * x / (1 + x * x) ** 2,
                      TINY + [-1e10, 1e10, 1e100], 0),
    "arctan2(1, x)": (lambda x: np.arctan2(1.0, x), lambda x: 2 * x / (1 + x * x) ** 2,
                      TINY + [-1e10, 1e10, 1e100], 0),
}

SCIPY = {
    # error function and the normal distribution
    "erf": (sc.erf, lambda x: -4 * x / mp.sqrt(mp.pi) * mp.exp(-x * x),
            TINY + [-26.0, 26.0, -1e10, 1e300], 0),
    "erfc": (sc.erfc, lambda x: 4 * x / mp.sqrt(mp.pi) * mp.exp(-x * x),
             TINY + [-26.0, 26.0, -1e10, 1e300], 0),
    "erfcx": (sc.erfcx, _erfcx2, TINY + [-26.0, 19.5, 20.5, 1e4, 1e10, 1e100], 4),
    "erfinv": (sc.erfinv, _erfinv2, TINY + [1 - 1e-12, -1 + 1e-15], 0),
    "erfcinv": (sc.erfcinv, _erfcinv2, [1e-100, 1e-8, 1 - 1e-12, 2 - 1e-12], 0),
    "ndtr": (sc.ndtr, lambda x: -x * mp.npdf(x), TINY + [-38.0, 38.0, -1e10, 1e300], 0),
    "log_ndtr": (sc.log_ndtr, _log_ndtr2,
                 TINY + [-19.5, -20.5, -1e4, -1e10, -1e100, -1e300, 38.0, 1e10], 2),
    "ndtri": (sc.ndtri, _ndtri2, [1e-150, 1e-8, 1 - 1e-12, 1 - 2 ** -53], 0),
    # logistic
    "expit": (sc.expit, _expit2, WIDE[:-2] + [-40.0, 40.0], 0),
    "logit": (sc.logit, lambda p: (2 * p - 1) / (p * (1 - p)) ** 2,
              [1e-150, 1e-8, 1 - 1e-8, 1 - 2 ** -53], 0),
    "log_expit": (sc.log_expit, lambda x: -_expit_pair(x)[0] * _expit_pair(x)[1],
                  WIDE[:-2] + [-40.0, 40.0], 0),
    # gamma function and its logarithm
    "gammaln": (sc.gammaln, lambda x: mp.psi(1, x), [1e-150, 1e-8, 700.0, 1e10, 1e150], 0),
    "loggamma": (sc.loggamma, lambda x: mp.psi(1, x), [1e-150, 1e-8, 700.0, 1e10, 1e150], 0),
    "digamma": (sc.digamma, lambda x: mp.psi(2, x), [1e-100, 1e-8, 700.0, 1e10, 1e150], 0),
    "gamma": (sc.gamma, lambda x: mp.gamma(x) * (mp.psi(0, x) ** 2 + mp.psi(1, x)),
              [1e-100, -1e-100, 1e-8, 170.0], 0),
    "rgamma": (sc.rgamma, _rgamma2, TINY + [-0.49, 0.51, 170.0, 1e10], 0),
    # next to rgamma's zeros (ψ's poles) and at them, rgamma being entire
    "rgamma at its zeros": (sc.rgamma, lambda x: mp.diff(mp.rgamma, x, 2), RGAMMA_ZEROS, 0),
    # Bessel functions (J and Y to ±1e4: SciPy's own kernels lose ~ulp(x) of their phase,
    # 1e-6 relative at 1e10)
    "i0": (sc.i0, lambda x: mp.besseli(0, x) - mp.besseli(1, x) / x, TINY + [-700.0, 700.0], 2),
    "i1": (sc.i1, lambda x: mp.besseli(1, x) - mp.besseli(0, x) / x
           + 2 * mp.besseli(1, x) / x ** 2, TINY + [-700.0, 700.0], 2),
    "i0e": (sc.i0e, _i0e2, WIDE + [49.5, -50.5, 710.0, -800.0, 1e4], 2),
    "i1e": (sc.i1e, _i1e2, WIDE + [-49.5, 50.5, 710.0, -800.0, 1e4], 2),
    "j0": (sc.j0, lambda x: mp.besselj(1, x) / x - mp.besselj(0, x), TINY + [-1e4, 1e4], 2),
    "j1": (sc.j1, lambda x: -mp.besselj(1, x) - mp.besselj(0, x) / x
           + 2 * mp.besselj(1, x) / x ** 2, TINY + [-1e4, 1e4], 2),
    "y0": (sc.y0, lambda x: mp.bessely(1, x) / x - mp.bessely(0, x), [1e-100, 1e-8, 1e4], 0),
    "y1": (sc.y1, lambda x: -mp.bessely(1, x) - mp.bessely(0, x) / x
           + 2 * mp.bessely(1, x) / x ** 2, [1e-100, 1e-8, 1e4], 0),
    # more scipy.special
    "exp10": (sc.exp10, lambda x: mp.ln10 ** 2 * 10 ** x, [-1e-300, 1e-8, -300.0, 300.0], 0),
    "sinc": (np.sinc, lambda x: mp.diff(mp.sincpi, x, 2), TINY + [0.05, -0.0999, 0.1001], 0),
    "dawsn": (sc.dawsn, _dawsn2, TINY + [-19.5, 20.5, 1e4, -1e10, 1e100], 4),
    "exp1": (sc.exp1, lambda x: mp.exp(-x) * (1 / x + 1 / x ** 2), [1e-150, 1e-8, 700.0], 0),
    "expi": (sc.expi, lambda x: mp.exp(x) * (1 / x - 1 / x ** 2),
             [-1e-150, 1e-150, -1e-8, -700.0, 700.0], 0),
    "entr": (sc.entr, lambda x: -1 / x, [1e-300, 1e-8, 1e10, 1e300], 0),
    "xlogy(2, x)": (lambda x: sc.xlogy(2.0, x), lambda x: -2 / x ** 2,
                    [1e-150, 1e-8, 1e10, 1e150], 0),
    "xlog1py(2, x)": (lambda x: sc.xlog1py(2.0, x), lambda x: -2 / (1 + x) ** 2,
                      [-1 + 1e-12, -1e-300, 1e-8, 1e10, 1e150], 0),
}


def _log_ndtr1(x):
    return mp.sqrt(2 / mp.pi) / _erfcx(-x / mp.sqrt(2))


def _ie1(nu):
    def first(x):  # d/dx e^{-|x|}·I_ν(x): I0' = I1, I1' = I0 - I1/x
        s, a = mp.sign(x), abs(x)
        i0, i1 = mp.besseli(0, a), mp.besseli(1, a)
        d = i1 - i0 if nu == 0 else i0 - i1 / a - i1
        return mp.exp(-a) * d * (s if nu == 0 else 1)
    return first


# The first derivatives of the rules whose partials take another form at the edges (an
# asymptotic series, a logistic function, a scaled quotient): as the second ones.
FIRST = {
    "expm1": (np.expm1, mp.exp, [-1e-300, -40.0, -700.0, 700.0], 0),
    "logaddexp(x, 0)": (lambda x: np.logaddexp(x, 0.0), lambda x: _expit_pair(x)[0],
                        [-700.0, -40.0, 1e-300, 40.0, 700.0], 0),
    "expit": (sc.expit, lambda x: _expit_pair(x)[0] * _expit_pair(x)[1],
              [-700.0, -1e-8, 1e-300, 40.0, 700.0], 0),
    "arctan": (np.arctan, lambda x: 1 / (1 + x * x), [-1e-300, 1e10, -1e100, 1e150], 0),
    "hypot(x, 1)": (lambda x: np.hypot(x, 1.0), lambda x: x / mp.sqrt(1 + x * x),
                    [-1e-300, 1e-8, -1e10, 1e300], 0),
    "erfcx": (sc.erfcx, lambda x: 2 * x * _erfcx(x) - 2 / mp.sqrt(mp.pi),
              [-26.0, 1e-300, 21.0, 1e4, 1e10, 1e100], 2),
    "dawsn": (sc.dawsn, lambda x: 1 - 2 * x * _dawsn(x), [-1e4, 1e-300, 21.0, -1e10, 1e100], 2),
    "log_ndtr": (sc.log_ndtr, _log_ndtr1, [-1e300, -1e10, -1e4, -21.0, 1e-300, 30.0], 0),
    "i0e": (sc.i0e, _ie1(0), [-1e10, -51.0, 1e-300, 700.0, 1e4, 1e300], 1),
    "i1e": (sc.i1e, _ie1(1), [-1e10, -51.0, 1e-300, 700.0, 1e4, 1e300], 1),
    "rgamma": (sc.rgamma, lambda x: -mp.psi(0, x) * mp.rgamma(x) if x else mp.mpf(1),
               [-1e-300, 1e-8, 0.0, 170.0], 1),
    "rgamma at its zeros": (sc.rgamma, lambda x: mp.diff(mp.rgamma, x), RGAMMA_ZEROS, 0),
}


def _reference(second, x: float, digits: int) -> float:
    decades = abs(math.log10(abs(x))) if x else 0.0
    with mp.workdps(60 + int(digits * decades)):
        return float(second(mp.mpf(x)))


def _dualad(f, x: float, mode: str) -> float:
    with np.errstate(over="ignore"):  # (x·x overflows in erf's partial at 1e300, harmlessly)
        if mode == "nested":
            return float(dualad.derivative(dualad.derivative(f))(np.float64(x)))
        return float(dualad.hessian(f, mode=mode)(np.float64(x)))


def _cases():
    for table in (UNARY, SCIPY):
        for name, (f, second, points, digits) in table.items():
            yield pytest.param(f, second, points, digits, id=name)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # no 0/0, inf - inf or x/0 on the way
@pytest.mark.parametrize("f, second, points, digits", list(_cases()))
def test_second_derivative_at_the_edges(f, second, points, digits):
    failures = []
    for x in points:
        want = _reference(second, x, digits)
        assert math.isfinite(want), f"the reference at x={x!r} is {want}"
        for mode in MODES:
            got = _dualad(f, x, mode)
            if not (math.isfinite(got) and abs(got - want) <= RTOL * abs(want) + ATOL):
                failures.append(f"x={x!r} {mode}: {got!r}, mpmath {want!r}")
    assert not failures, "\n".join(failures)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("f, first, points, digits",
                         [pytest.param(*row, id=name) for name, row in FIRST.items()])
def test_first_derivative_at_the_edges(f, first, points, digits):
    failures = []
    for x in points:
        want = _reference(first, x, digits)
        with np.errstate(over="ignore"):
            got = {"forward": float(dualad.derivative(f)(np.float64(x))),
                   "reverse": float(dualad.grad(f)(np.float64(x)))}
        for mode, value in got.items():
            if not (math.isfinite(value) and abs(value - want) <= RTOL * abs(want) + ATOL):
                failures.append(f"x={x!r} {mode}: {value!r}, mpmath {want!r}")
    assert not failures, "\n".join(failures)


def _expit_third(e):
    s, rest = 1 / (1 + e), e / (1 + e)  # expit x and 1 - expit x, for e = exp(-x)
    return s * rest * (1 - 6 * s * rest)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("f, third", [
    pytest.param(np.tanh, lambda x: -2 * mp.sech(x) ** 2 * (1 - 3 * mp.tanh(x) ** 2), id="tanh"),
    pytest.param(sc.expit, lambda x: _expit_third(mp.exp(-x)), id="expit"),
])
def test_third_derivative_through_sech_squared(f, third):
    """tanh′ and expit′ are the primitive sech² (whose own partial reads tanh): their
    third derivatives, by jets and by nested derivatives, at 0 and at the edges."""
    failures = []
    for x in [0.0, -1e-8, 0.3, -20.0, 20.0, -705.0, 705.0, 1e300]:
        want = _reference(third, x, 2) if abs(x) < 1e10 else 0.0
        with np.errstate(over="ignore"):
            by_jet = 6.0 * float(dualad.jet(f, (x,), ([1.0, 0.0, 0.0],),
                                            factorial_scaled=False)[1][2])
            nested = float(dualad.derivative(dualad.derivative(dualad.derivative(f)))(
                np.float64(x)))
        for mode, got in (("jet", by_jet), ("nested", nested)):
            if not (math.isfinite(got) and abs(got - want) <= RTOL * abs(want) + ATOL):
                failures.append(f"x={x!r} {mode}: {got!r}, mpmath {want!r}")
    assert not failures, "\n".join(failures)
