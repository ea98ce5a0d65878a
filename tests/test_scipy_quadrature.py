"""scipy.integrate's quadratures differentiated (dualad/solvers/scipy_quadrature.py).

The spec rows check quad (closed over, args, limits, weighted), quad_vec, fixed_quad,
simpson, romb and cumulative_trapezoid against central differences in every mode.
Here: closed forms (Leibniz's rule, Gaussian integrals, each weight of quad, quad_vec
on finite and infinite ranges) in jacfwd, jacrev and hessian, the log-weights against
central differences of SciPy's quad, breakpoints, SciPy's own results and warnings
where nothing is differentiated, and what is refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad

si = pytest.importorskip("scipy.integrate")


def test_leibniz_rule_from_the_limits():
    """d/dp ∫_0^p exp(-x²) dx = exp(-p²), d²/dp² = −2p·exp(-p²)."""
    erf_like = lambda p: si.quad(lambda x: np.exp(-x ** 2), 0.0, p, epsabs=1e-14)[0]
    for p in (0.3, 1.2):
        assert_allclose(dualad.derivative(erf_like)(p), np.exp(-p ** 2), rtol=1e-12)
        assert_allclose(dualad.second_derivative(erf_like)(p), -2 * p * np.exp(-p ** 2),
                        rtol=1e-10)


def test_a_gaussian_integral_over_the_whole_line():
    """∫ exp(−a x² + b x) dx = √(π/a)·exp(b²/4a): its gradient and Hessian."""
    integral = lambda p: si.quad(lambda x: np.exp(-p[0] * x ** 2 + p[1] * x), -np.inf,
                                 np.inf, epsabs=1e-14, epsrel=1e-13)[0]
    closed = lambda p: np.sqrt(np.pi / p[0]) * np.exp(p[1] ** 2 / (4 * p[0]))
    p = np.array([2.0, 0.5])
    assert_allclose(dualad.grad(integral)(p), dualad.grad(closed)(p), rtol=1e-10)
    assert_allclose(dualad.hessian(integral)(p), dualad.hessian(closed)(p), rtol=1e-9)


def test_breakpoints_and_the_value_kept_bit_for_bit():
    kink = lambda p: si.quad(lambda x: np.abs(x - 0.5) * p, 0.0, 1.0, points=[0.5])[0]
    assert_allclose(dualad.derivative(kink)(2.0), 0.25, rtol=1e-14)
    value = dualad.jvp(kink, (2.0,), (1.0,))[0]
    assert dualad.primal_value(value) == si.quad(lambda x: np.abs(x - 0.5) * 2.0, 0.0, 1.0,
                                                 points=[0.5])[0]


def test_nothing_differentiated_is_scipy_s_quad():
    own = si.quad.__wrapped__
    assert si.quad(np.sin, 0.0, 1.0) == own(np.sin, 0.0, 1.0)
    assert len(si.quad(np.sin, 0.0, 1.0, full_output=1)) == 3
    with pytest.warns(si.IntegrationWarning):
        si.quad(lambda x: 1 / np.sqrt(abs(x - 0.3)), 0.0, 1.0, limit=3)


def test_simpson_is_not_differentiated_in_its_sample_points():
    with pytest.raises(TypeError, match="not in their positions"):
        dualad.grad(lambda x: si.simpson(np.sin(x), x=x))(np.linspace(0.0, 1.0, 5))


# -- every mode against a closed form -----------------------------------------------------

TIGHT = {"epsabs": 1e-13, "epsrel": 1e-13}


def _every_mode(f, closed, p, rtol=1e-10, atol=1e-12):
    """f's Jacobian (jacfwd, jacrev) and the Hessian of its sum (hyper-dual, forward over
    reverse) are the closed form's."""
    expected = dualad.jacfwd(closed)(p)
    assert_allclose(dualad.jacfwd(f)(p), expected, rtol=rtol, atol=atol)
    assert_allclose(dualad.jacrev(f)(p), expected, rtol=rtol, atol=atol)
    total, closed_total = (lambda p: np.sum(f(p))), (lambda p: np.sum(closed(p)))
    hessian = dualad.hessian(closed_total)(p)
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(total, mode=mode)(p), hessian, rtol=rtol * 10,
                        atol=atol * 10)


def _central(f, p, step=1e-5):
    return np.stack([(f(p + step * e) - f(p - step * e)) / (2 * step)
                     for e in np.eye(p.size)], axis=-1)


def test_fixed_quad_in_every_mode():
    """∫_b^{a+3} c·exp(−c x) dx with c = a: exp(−a b) − exp(−a (a + 3)), exact for the
    rule's polynomial part: fixed_quad is the same rule on Duals."""
    n = 12
    f = lambda p: si.fixed_quad(lambda x, c: np.exp(-c * x) * c, p[1], p[0] + 3.0,
                                args=(p[0],), n=n)[0]
    closed = lambda p: np.exp(-p[0] * p[1]) - np.exp(-p[0] * (p[0] + 3.0))
    _every_mode(f, closed, np.array([0.7, 0.4]), rtol=1e-9)


def test_dblquad_tplquad_nquad_quad_inside_quad():
    """Polynomials over regions whose limits move (closed forms by hand)."""
    double = lambda p: si.dblquad(lambda y, x: p[0] * x * y + x ** 2, 0.0, 1.0, 0.0,
                                  lambda x: 1.0 + 0.5 * p[1] * x)[0]
    _every_mode(double, lambda p: p[0] / 2 * (0.5 + p[1] / 3 + p[1] ** 2 / 16) + 1 / 3
                + p[1] / 8, np.array([0.3, 0.4]), rtol=1e-10)
    triple = lambda p: si.tplquad(lambda z, y, x: p[0] * x * y * z, 0.0, 1.0, 0.0, 1.0,
                                  0.0, lambda x, y: p[1])[0]
    # (21³ evaluations of the integrand on Duals per transform: forward mode only here)
    assert_allclose(dualad.jacfwd(triple)(np.array([0.3, 0.4])), [0.4 ** 2 / 8, 0.3 * 0.4 / 4],
                    rtol=1e-10)
    nested = lambda p: si.nquad(lambda x, y, c: c * x * y ** 2 + x, [[0.0, 1.0], [p[1], 2.0]],
                                args=(p[0],))[0]
    _every_mode(nested, lambda p: p[0] / 2 * (8 - p[1] ** 3) / 3 + (2 - p[1]) / 2,
                np.array([0.3, 0.4]), rtol=1e-10)


def test_quad_vec_in_every_mode():
    """A closed-over rate, a parameter through args and moving limits (reversed too)."""
    def f(p):
        k, a, b = p
        return si.quad_vec(lambda x, c: np.array([np.exp(-k * x), c * np.sin(k * x)]), a, b,
                           args=(a,), epsrel=1e-13)[0]

    def closed(p):
        k, a, b = p
        return np.array([(np.exp(-k * a) - np.exp(-k * b)) / k,
                         a * (np.cos(k * a) - np.cos(k * b)) / k])

    for p in (np.array([0.8, 0.2, 1.5]), np.array([0.8, 1.5, 0.2])):
        _every_mode(f, closed, p)


def test_quad_vec_over_infinite_ranges():
    """SciPy's maps of (a, ∞), (−∞, b) and (−∞, ∞), the finite limit moving."""
    def f(p):
        a, k = p
        return np.array([
            si.quad_vec(lambda x: np.exp(-k * x), a, np.inf, epsrel=1e-12)[0],
            si.quad_vec(lambda x, c: np.exp(c * x) * np.array([1.0, 2.0]), -np.inf, a,
                        epsrel=1e-12, args=(k,))[0][1],
            si.quad_vec(lambda x: np.exp(k * x), a, -np.inf, epsrel=1e-12)[0],
            si.quad_vec(lambda x: np.exp(-k * x ** 2 + a * x), -np.inf, np.inf,
                        epsrel=1e-12)[0]])

    closed = lambda p: np.array([np.exp(-p[1] * p[0]) / p[1], 2 * np.exp(p[1] * p[0]) / p[1],
                                 -np.exp(p[1] * p[0]) / p[1],
                                 np.sqrt(np.pi / p[1]) * np.exp(p[0] ** 2 / (4 * p[1]))])
    _every_mode(f, closed, np.array([0.3, 0.9]), rtol=1e-9)


def test_quad_vec_nothing_differentiated_and_the_value_kept():
    own = si.quad_vec.__wrapped__
    f = lambda x: np.array([np.sin(x), np.cos(3 * x)])
    res, err = si.quad_vec(f, 0.0, 2.0)
    expected = own(f, 0.0, 2.0)
    assert np.array_equal(res, expected[0]) and err == expected[1]
    full = si.quad_vec(f, 0.0, 2.0, full_output=True)
    assert len(full) == 3
    assert np.array_equal(full[2].intervals, own(f, 0.0, 2.0, full_output=True)[2].intervals)
    seen = []

    def g(k):
        out = si.quad_vec(lambda x: np.exp(-k * x) * np.array([1.0, x]), 0.0, 2.0,
                          full_output=True)
        seen.append(out)
        return out[0]

    dualad.jacfwd(g)(0.5)
    plain = own(lambda x: np.exp(-0.5 * x) * np.array([1.0, x]), 0.0, 2.0)
    assert np.array_equal(dualad.primal_value(seen[0][0]), plain[0])
    assert seen[0][1] == plain[1] and len(seen[0]) == 3


def test_quad_cos_and_sin_weights_in_the_limits_the_frequency_and_args():
    """∫_a^b exp(−k x)·cos(ωx) dx = Re[(e^{zb} − e^{za})/z], z = −k + iω; sin: Im."""
    def f(p):
        a, b, k, w = p
        return np.array([si.quad(lambda x: np.exp(-k * x), a, b, weight="cos", wvar=w,
                                 **TIGHT)[0],
                         si.quad(lambda x, c: np.exp(-c * x), b, a, args=(k,), weight="sin",
                                 wvar=w, **TIGHT)[0]])

    def closed(p):
        a, b, k, w = p
        z = -k + 1j * w
        value = (np.exp(z * b) - np.exp(z * a)) / z
        return np.array([np.real(value), -np.imag(value)])

    _every_mode(f, closed, np.array([0.2, 1.7, 0.8, 2.3]))


def test_quad_fourier_integral_to_infinity():
    """QAWF: ∫_a^∞ exp(−k x)·cos(ωx) dx = Re[−e^{za}/z]."""
    f = lambda p: si.quad(lambda x, k: np.exp(-k * x), p[0], np.inf, args=(p[1],),
                          weight="cos", wvar=p[2], epsabs=1e-12, limlst=100)[0]
    closed = lambda p: np.real(-np.exp((-p[1] + 1j * p[2]) * p[0]) / (-p[1] + 1j * p[2]))
    _every_mode(f, closed, np.array([0.3, 0.9, 2.0]), rtol=1e-8, atol=1e-10)


def test_quad_cauchy_weight_moving_pole_and_limits():
    """PV ∫_a^b (x² + k x)/(x − c) dx
    = (b² − a²)/2 + (c + k)(b − a) + (c² + k c)·log((b − c)/(c − a))."""
    f = lambda p: si.quad(lambda x: x ** 2 + p[3] * x, p[0], p[1], weight="cauchy", wvar=p[2],
                          **TIGHT)[0]
    closed = lambda p: ((p[1] ** 2 - p[0] ** 2) / 2 + (p[2] + p[3]) * (p[1] - p[0])
                        + (p[2] ** 2 + p[3] * p[2]) * np.log((p[1] - p[2]) / (p[2] - p[0])))
    _every_mode(f, closed, np.array([0.2, 1.5, 0.7, 0.8]))


def test_quad_alg_weight_in_the_limits_and_exponents():
    """∫_a^b (c x + c²)(x − a)^α (b − x)^β dx by Beta functions; the exponents move,
    to second order (log² weights SciPy does not have: integrated in log coordinates)."""
    import scipy.special as sc

    def f(p):
        a, b, alpha, beta, c = p
        return si.quad(lambda x: c * x + c ** 2, a, b, weight="alg", wvar=(alpha, beta),
                       **TIGHT)[0]

    def closed(p):
        a, b, alpha, beta, c = p
        length = b - a
        return (c ** 2 * length ** (1 + alpha + beta) * sc.beta(alpha + 1, beta + 1)
                + c * (a * length ** (1 + alpha + beta) * sc.beta(alpha + 1, beta + 1)
                       + length ** (2 + alpha + beta) * sc.beta(alpha + 2, beta + 1)))

    _every_mode(f, closed, np.array([0.2, 1.5, -0.3, 0.4, 0.8]), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("weight", ["alg-loga", "alg-logb", "alg-log"])
def test_quad_log_weights_against_central_differences(weight):
    def f(p):
        return si.quad(lambda x: np.exp(p[4] * x), p[0], p[1], weight=weight,
                       wvar=(p[2], p[3]), **TIGHT)[0]

    p = np.array([0.2, 1.5, -0.3, 0.4, 0.8])
    J = dualad.jacfwd(f)(p)
    assert_allclose(J, _central(f, p), rtol=1e-7, atol=1e-8)
    assert_allclose(dualad.grad(f)(p), J, rtol=1e-12, atol=1e-14)
    assert_allclose(dualad.hessian(f)(p), _central(dualad.grad(f), p), rtol=1e-6, atol=1e-7)


def test_a_complex_integrand():
    """∫_0^b exp(i k x) dx = (e^{ikb} − 1)/(ik), of which |·|²."""
    f = lambda p: np.abs(si.quad(lambda x: np.exp(1j * p[0] * x), 0.0, p[1], complex_func=True,
                                 **TIGHT)[0]) ** 2
    closed = lambda p: np.abs((np.exp(1j * p[0] * p[1]) - 1) / (1j * p[0])) ** 2
    _every_mode(f, closed, np.array([0.7, 1.3]))


def test_a_weighted_quad_is_scipy_s_when_nothing_is_differentiated():
    own = si.quad.__wrapped__
    for options in ({"weight": "cos", "wvar": 2.0}, {"weight": "alg", "wvar": (-0.5, 0.3)},
                    {"weight": "cauchy", "wvar": 0.4}):
        assert si.quad(np.exp, 0.0, 1.0, **options) == own(np.exp, 0.0, 1.0, **options)
    seen = []

    def g(w):
        out = si.quad(lambda x: np.exp(-x), 0.0, 1.0, weight="sin", wvar=w, full_output=1)
        seen.append(out)
        return out[0]

    dualad.derivative(g)(2.0)
    plain = own(lambda x: np.exp(-x), 0.0, 1.0, weight="sin", wvar=2.0, full_output=1)
    assert dualad.primal_value(seen[0][0]) == plain[0] and seen[0][1] == plain[1]
    assert len(seen[0]) == len(plain)


_SEEN_BY_NAME = {}


def _reads_a_global(x):
    return np.exp(-_SEEN_BY_NAME["p"] * x)


def test_a_weighted_integrand_reading_a_global_dual_is_refused():
    """What no closure, default or args shows cannot be integrated by QUADPACK's weights."""
    def weighted(p):
        _SEEN_BY_NAME["p"] = p
        return si.quad(_reads_a_global, 0.0, 1.0, weight="cos", wvar=2.0)[0]

    with pytest.raises(TypeError, match="args="):
        dualad.derivative(weighted)(0.5)
