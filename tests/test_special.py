"""Derivatives of the special functions against mpmath at 50 digits, and the
softmax family's stability for large inputs.

The property tests of tests/test_rules.py (driven by the SPECIAL rows of
specs.py) check each rule against finite differences; here each first and
second derivative is compared with mpmath's (``mpmath.diff`` of the mpmath
function) at a few points, to about the accuracy of scipy's own kernels.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad

sc = pytest.importorskip("scipy.special")
mpmath = pytest.importorskip("mpmath")
mp = mpmath.mp

from dualad import ops  # noqa: E402


def _expit(x):
    return 1 / (1 + mp.exp(-x))


def _ndtri(p):
    return mp.sqrt(2) * mp.erfinv(2 * p - 1)


# name: (function on float64 arrays or Duals, the mpmath function, points)
UNARY = {
    "erf": (sc.erf, mp.erf, [-2.0, -0.3, 0.0, 0.7, 2.5]),
    "erfc": (sc.erfc, mp.erfc, [-2.0, -0.3, 0.0, 0.7, 2.5]),
    "erfcx": (sc.erfcx, lambda x: mp.exp(x * x) * mp.erfc(x), [-1.5, -0.3, 0.0, 0.7, 2.5]),
    "erfinv": (sc.erfinv, mp.erfinv, [-0.9, -0.3, 0.0, 0.5, 0.95]),
    "ndtr": (sc.ndtr, mp.ncdf, [-3.0, -0.5, 0.0, 1.2]),
    "log_ndtr": (sc.log_ndtr, lambda x: mp.log(mp.ncdf(x)), [-30.0, -5.0, -0.5, 0.0, 1.2, 4.0]),
    "ndtri": (sc.ndtri, _ndtri, [0.01, 0.2, 0.5, 0.8, 0.99]),
    "expit": (sc.expit, _expit, [-30.0, -2.0, 0.0, 1.5, 30.0]),
    "logit": (sc.logit, lambda x: mp.log(x / (1 - x)), [0.01, 0.2, 0.5, 0.8, 0.99]),
    "log_expit": (sc.log_expit, lambda x: mp.log(_expit(x)), [-30.0, -2.0, 0.0, 1.5, 30.0]),
    "gammaln": (sc.gammaln, mp.loggamma, [0.3, 1.0, 2.5, 7.0]),
    "digamma": (sc.digamma, mp.digamma, [0.3, 1.0, 2.5, 7.0]),
    "polygamma(1, .)": (lambda x: ops.polygamma(1, x), lambda x: mp.polygamma(1, x),
                        [0.3, 1.0, 2.5, 7.0]),
    "polygamma(3, .)": (lambda x: ops.polygamma(3, x), lambda x: mp.polygamma(3, x),
                        [0.3, 1.0, 2.5, 7.0]),
    "gamma": (sc.gamma, mp.gamma, [0.3, 1.0, 2.5, 7.0]),
    "i0": (sc.i0, lambda x: mp.besseli(0, x), [-3.0, -0.4, 0.0, 1.0, 5.0]),
    "i1": (sc.i1, lambda x: mp.besseli(1, x), [-3.0, -0.4, 0.0, 1.0, 5.0]),
    "i0e": (sc.i0e, lambda x: mp.exp(-abs(x)) * mp.besseli(0, x),
            [-800.0, -3.0, -0.4, 1.0, 5.0, 1000.0]),  # (I0 alone overflows past 713)
    "i1e": (sc.i1e, lambda x: mp.exp(-abs(x)) * mp.besseli(1, x),
            [-800.0, -3.0, -0.4, 1.0, 5.0, 1000.0]),
    "j0": (sc.j0, lambda x: mp.besselj(0, x), [-3.0, -0.4, 0.0, 1.0, 5.0]),
    "j1": (sc.j1, lambda x: mp.besselj(1, x), [-3.0, -0.4, 0.0, 1.0, 5.0]),
    "y0": (sc.y0, lambda x: mp.bessely(0, x), [0.3, 1.0, 2.5, 6.0]),
    "y1": (sc.y1, lambda x: mp.bessely(1, x), [0.3, 1.0, 2.5, 6.0]),
    "sinc": (np.sinc, mp.sincpi, [-2.5, -0.3, -1e-3, 0.0, 1e-6, 0.05, 0.0999, 0.1001, 0.7]),
    # scipy.special beyond specs.py (rules in dualad/rules/scipy_special.py)
    "exp1": (sc.exp1, mp.e1, [0.1, 1.0, 4.0]),
    "expi": (sc.expi, mp.ei, [-2.0, 0.1, 1.0, 4.0]),
    "expn(3, .)": (lambda x: sc.expn(3, x), lambda x: mp.expint(3, x), [0.1, 1.0, 4.0]),
    "expn(0, .)": (lambda x: sc.expn(0, x), lambda x: mp.expint(0, x), [0.1, 1.0, 4.0]),
    "dawsn": (sc.dawsn, lambda x: mp.sqrt(mp.pi) / 2 * mp.exp(-x * x) * mp.erfi(x),
              [-2.0, 0.0, 0.5, 3.0]),
    "fresnel S": (lambda x: sc.fresnel(x)[0], mp.fresnels, [-1.5, 0.0, 0.4, 2.0]),
    "fresnel C": (lambda x: sc.fresnel(x)[1], mp.fresnelc, [-1.5, 0.0, 0.4, 2.0]),
    "sici Si": (lambda x: sc.sici(x)[0], mp.si, [-2.0, 0.0, 0.4, 5.0]),
    "sici Ci": (lambda x: sc.sici(x)[1], mp.ci, [0.2, 1.0, 5.0]),
    "entr": (sc.entr, lambda x: -x * mp.log(x), [0.1, 1.0, 3.0]),
    "loggamma": (sc.loggamma, mp.loggamma, [0.3, 1.0, 7.0]),
    "spence": (sc.spence, lambda z: mp.polylog(2, 1 - z), [0.2, 0.95, 1.0, 1.05, 3.0]),
    "factorial": (sc.factorial, lambda n: mp.gamma(n + 1), [0.5, 2.0, 4.5]),
    "zeta(x)": (sc.zeta, mp.zeta, [-4.5, -1.5, 0.0, 0.5, 2.0, 5.0]),
    "hyp1f1(0.5, 1.5, .)": (lambda x: sc.hyp1f1(0.5, 1.5, x), lambda x: mp.hyp1f1(0.5, 1.5, x),
                            [-2.0, 0.3, 3.0]),
    "hyp2f1(0.5, 1.5, 2.5, .)": (lambda x: sc.hyp2f1(0.5, 1.5, 2.5, x),
                                 lambda x: mp.hyp2f1(0.5, 1.5, 2.5, x), [-0.7, 0.2, 0.8]),
}

# name: (function, mpmath function, points (x, y))
BINARY = {
    "xlogy": (sc.xlogy, lambda x, y: x * mp.log(y), [(0.5, 0.2), (-1.5, 3.0), (2.0, 1.0)]),
    "xlog1py": (sc.xlog1py, lambda x, y: x * mp.log1p(y), [(0.5, -0.7), (-1.5, 3.0), (2.0, 0.1)]),
    "beta": (sc.beta, mp.beta, [(0.5, 0.7), (1.5, 3.0), (4.0, 2.0)]),
    "betaln": (sc.betaln, lambda a, b: mp.log(mp.beta(a, b)),
               [(0.5, 0.7), (1.5, 3.0), (4.0, 2.0)]),
    "kl_div": (sc.kl_div, lambda x, y: x * mp.log(x / y) - x + y, [(0.5, 0.2), (2.0, 3.0)]),
    "rel_entr": (sc.rel_entr, lambda x, y: x * mp.log(x / y), [(0.5, 0.2), (2.0, 3.0)]),
    "boxcox": (sc.boxcox, lambda x, lm: (x ** lm - 1) / lm if lm else mp.log(x),
               [(0.5, 0.7), (2.0, -1.2), (3.0, 0.01)]),
    "boxcox1p": (sc.boxcox1p, lambda x, lm: ((1 + x) ** lm - 1) / lm if lm else mp.log1p(x),
                 [(-0.5, 0.7), (2.0, -1.2), (3.0, 0.01)]),
    "poch": (sc.poch, mp.rf, [(0.5, 0.7), (1.5, -0.3), (4.0, 2.0)]),
    "binom": (sc.binom, mp.binomial, [(4.5, 0.7), (6.0, 2.5)]),
    "zeta(x, q)": (sc.zeta, mp.zeta, [(2.5, 0.3), (1.5, 3.0)]),
    "owens_t": (sc.owens_t, lambda h, a: mp.quad(
        lambda t: mp.exp(-h * h * (1 + t * t) / 2) / (1 + t * t), [0, a]) / (2 * mp.pi),
        [(0.5, 0.7), (-1.5, 2.0)]),
}

# Derivatives within this relative distance of mpmath's (plus a tiny absolute
# floor for derivatives that vanish at a point, like erf'' at 0). Second
# derivatives inherit the first's rounding, amplified by the recurrences.
RTOL = {1: 1e-12, 2: 1e-10}
ATOL = 1e-14


def _mp_derivative(f, args, argnum, order):
    with mp.workdps(50):
        point = [mp.mpf(a) for a in args]

        def along(t):
            return f(*point[:argnum], t, *point[argnum + 1:])

        return float(mp.diff(along, point[argnum], order))


def _dualad_derivative(f, args, argnum, order):
    def g(t):
        return f(*args[:argnum], t, *args[argnum + 1:])

    d = g
    for _ in range(order):
        d = dualad.derivative(d)
    return float(d(np.float64(args[argnum])))


def _cases():
    for name, (f, ref, points) in UNARY.items():
        for x in points:
            for order in (1, 2):
                yield pytest.param(f, ref, (x,), 0, order, id=f"{name}-x={x}-d{order}")
    for name, (f, ref, points) in BINARY.items():
        for args in points:
            for argnum in (0, 1):
                for order in (1, 2):
                    yield pytest.param(f, ref, args, argnum, order,
                                       id=f"{name}-{args}-arg{argnum}-d{order}")


@pytest.mark.parametrize("f, ref, args, argnum, order", list(_cases()))
def test_derivative_matches_mpmath(f, ref, args, argnum, order):
    expected = _mp_derivative(ref, args, argnum, order)
    got = _dualad_derivative(f, args, argnum, order)
    assert got == pytest.approx(expected, rel=RTOL[order], abs=ATOL)


def test_sinc_at_zero():
    # sinc'(0) = 0 exactly and sinc''(0) = -π²/3, both from the series branch.
    assert dualad.derivative(np.sinc)(0.0) == 0.0
    assert dualad.derivative(dualad.derivative(np.sinc))(0.0) == pytest.approx(
        -np.pi ** 2 / 3, rel=1e-14)


def test_polygamma_order_is_not_differentiated():
    n = np.array([1.0, 2.0])
    x = np.array([0.7, 1.9])
    jac = dualad.jacfwd(lambda x: ops.polygamma(n, x))(x)
    np.testing.assert_allclose(jac, np.diag(sc.polygamma(n + 1, x)), rtol=1e-14)


# ---------------------------------------------------------------------------
# logsumexp, softmax, log_softmax
# ---------------------------------------------------------------------------

BIG = np.array([[1000.0, 1000.0, 999.0, -1000.0], [-1000.0, 0.0, 1000.0, 1000.0]])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_logsumexp_matches_scipy_and_its_gradient_is_softmax(axis):
    value = ops.logsumexp(BIG, axis=axis)
    np.testing.assert_allclose(value, sc.logsumexp(BIG, axis=axis), rtol=1e-15)
    if axis is None:
        grad = dualad.grad(ops.logsumexp)(BIG)
        assert np.all(np.isfinite(grad))
        np.testing.assert_allclose(grad, sc.softmax(BIG), rtol=1e-14, atol=1e-300)
    else:
        jac = dualad.jacfwd(lambda a: ops.logsumexp(a, axis=axis))(BIG)
        assert np.all(np.isfinite(jac))
        # ∂ lse(a)_k / ∂ a_ij = softmax(a)_ij where (i, j) is in slice k.
        total = jac.sum(axis=0)
        np.testing.assert_allclose(total, sc.softmax(BIG, axis=axis), rtol=1e-14, atol=1e-300)


def test_logsumexp_keepdims_and_all_minus_infinity():
    a = np.array([[-np.inf, -np.inf], [1.0, 2.0]])
    np.testing.assert_array_equal(ops.logsumexp(a, axis=1, keepdims=True),
                                  sc.logsumexp(a, axis=1, keepdims=True))
    assert ops.logsumexp(a, axis=1).shape == (2,)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_softmax_and_log_softmax_jacobians_for_large_inputs(mode):
    x = np.array([1000.0, 1000.0, 999.0, -1000.0])
    jac = dualad.jacfwd if mode == "fwd" else dualad.jacrev
    s = sc.softmax(x)
    j_soft = jac(ops.softmax)(x)
    j_log = jac(ops.log_softmax)(x)
    assert np.all(np.isfinite(j_soft)) and np.all(np.isfinite(j_log))
    np.testing.assert_allclose(ops.softmax(x), s, rtol=1e-15)
    np.testing.assert_allclose(ops.log_softmax(x), sc.log_softmax(x), rtol=1e-15)
    np.testing.assert_allclose(j_soft, np.diag(s) - np.outer(s, s), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(j_log, np.eye(4) - s, rtol=1e-14, atol=1e-300)


def test_logsumexp_hessian_for_large_inputs():
    x = np.array([1000.0, 999.0, 998.5])
    s = sc.softmax(x)
    h = dualad.jacfwd(dualad.grad(ops.logsumexp))(x)
    np.testing.assert_allclose(h, np.diag(s) - np.outer(s, s), rtol=1e-13, atol=1e-16)


def test_scipy_functions_are_registered_under_their_dualad_equivalents():
    from dualad.primitive import FUNCTION_HANDLERS, UFUNC_HANDLERS
    assert FUNCTION_HANDLERS[sc.logsumexp] is ops.logsumexp
    assert FUNCTION_HANDLERS[sc.softmax] is ops.softmax
    assert FUNCTION_HANDLERS[sc.log_softmax] is ops.log_softmax
    assert FUNCTION_HANDLERS[sc.polygamma] is ops.polygamma
    for name in ("erf", "erfc", "erfcx", "erfinv", "expit", "logit", "log_expit", "xlogy",
                 "xlog1py", "gammaln", "digamma", "gamma", "beta", "betaln", "ndtr",
                 "log_ndtr", "ndtri", "i0", "i0e", "i1", "i1e", "j0", "j1", "y0", "y1"):
        assert UFUNC_HANDLERS[getattr(sc, name)] is getattr(ops, name)
