"""scipy.special beyond the spec rows (tests/specs_special.py): gammainc/gammaincc in
``a`` against JAX and mpmath, their limits, the derivatives that raise, values-only
calls, SciPy's values and dtypes kept, and dualad_gpu.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import dualad

sc = pytest.importorskip("scipy.special")

# (a, x): small a, large a, x << a, x >> a, both sides of x = a + 1 (series / fraction).
POINTS = [(0.01, 0.001), (0.1, 0.5), (0.5, 0.2), (1.5, 0.3), (2.5, 3.0), (2.5, 3.6),
          (3.0, 10.0), (0.3, 20.0), (10.0, 1.0), (50.0, 49.0), (50.0, 52.0), (100.0, 101.5),
          (1000.0, 990.0), (1000.0, 1020.0), (0.7, 3.0), (20.0, 200.0)]
A = np.array([p[0] for p in POINTS])
X = np.array([p[1] for p in POINTS])


def _d_da(f, a, x):
    return dualad.jvp(lambda a: f(a, x), (a,), (np.ones_like(a),))[1]


def _d2_da2(f, a, x):
    return dualad.jvp(lambda a: _d_da(f, a, x), (a,), (np.ones_like(a),))[1]


@pytest.mark.parametrize("f", [sc.gammainc, sc.gammaincc], ids=["gammainc", "gammaincc"])
def test_derivative_in_a_matches_jax(f):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jf = getattr(jax.scipy.special, f.__name__)
    theirs = jax.vmap(jax.grad(jf))(A, X)
    assert_allclose(_d_da(f, A, X), theirs, rtol=1e-11, atol=1e-300)
    reverse = np.array([dualad.grad(lambda a, x=x: f(a, x))(a) for a, x in POINTS])
    assert_allclose(reverse, theirs, rtol=1e-11, atol=1e-300)
    a32, x32 = A[:12].astype(np.float32), X[:12].astype(np.float32)
    ours = _d_da(f, a32, x32)
    assert ours.dtype == np.float32
    assert_allclose(ours, jax.vmap(jax.grad(jf))(a32, x32), rtol=2e-4, atol=1e-30)


def test_derivatives_in_a_match_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mp = mpmath.mp
    d1, d2 = _d_da(sc.gammainc, A, X), _d2_da2(sc.gammainc, A, X)
    for i, (a, x) in enumerate(POINTS[:-1]):  # mpmath.diff needs P not to underflow
        with mp.workdps(40):
            p = lambda t, x=x: mpmath.gammainc(t, 0, x, regularized=True)
            r1, r2 = float(mpmath.diff(p, a)), float(mpmath.diff(p, a, 2))
        # the conditioning of P in a grows with a (1e-12 relative at a = 1000)
        tol = 1e-13 if a < 20 else 1e-11
        assert d1[i] == pytest.approx(r1, rel=tol), (a, x)
        assert d2[i] == pytest.approx(r2, rel=tol), (a, x)


def test_second_derivatives_are_differences_of_the_first():
    h = 1e-5
    for f in (sc.gammainc, sc.gammaincc):
        daa = _d2_da2(f, A[:-1], X[:-1])
        fd = (_d_da(f, A[:-1] + h * A[:-1], X[:-1]) - _d_da(f, A[:-1] - h * A[:-1], X[:-1])) \
            / (2 * h * A[:-1])
        assert_allclose(daa, fd, rtol=1e-5, atol=1e-12)
        for a, x in POINTS[2:10]:
            hess = dualad.hessian(lambda v, f=f: f(v[0], v[1]))(np.array([a, x]))
            dx = lambda a, x=x, f=f: dualad.derivative(lambda x: f(a, x))(x)
            assert hess[0, 1] == pytest.approx((dx(a + h) - dx(a - h)) / (2 * h), rel=1e-6)
            rev = dualad.hessian(lambda v, f=f: f(v[0], v[1]), mode="fwd-rev")(np.array([a, x]))
            assert_allclose(rev, hess, rtol=1e-12)


def test_values_stay_scipys_and_limits():
    value, _ = dualad.jvp(lambda a: sc.gammainc(a, X), (A,), (np.ones_like(A),))
    assert_array_equal(value, sc.gammainc(A, X))
    d = _d_da(sc.gammainc, np.array([2.0, 2.0, -1.0]), np.array([0.0, np.inf, 1.0]))
    assert_array_equal(d[:2], 0.0)
    assert np.isnan(d[2])
    assert _d_da(sc.gammaincc, np.array(2.0), np.array(0.0)) == 0.0


def test_third_derivative_in_a_raises():
    d2 = lambda a: _d2_da2(sc.gammainc, a, 1.5)
    with pytest.raises(TypeError, match="at most twice in 'a'"):
        dualad.derivative(d2)(2.0)
    # in x, the second derivative in a is differentiated again
    d3 = dualad.derivative(lambda x: _d2_da2(sc.gammainc, np.float64(2.0), x))(1.5)
    h = 1e-5
    fd = (_d2_da2(sc.gammainc, np.float64(2.0), 1.5 + h)
          - _d2_da2(sc.gammainc, np.float64(2.0), 1.5 - h)) / (2 * h)
    assert d3 == pytest.approx(fd, rel=1e-6)


@pytest.mark.parametrize("f, message", [
    (lambda a: sc.hyp1f1(a, 1.5, 0.3), "not in 'a'"),
    (lambda b: sc.hyp1f1(0.5, b, 0.3), "not in 'b'"),
    (lambda c: sc.hyp2f1(0.5, 1.5, c, 0.3), "not in 'c'"),
], ids=["hyp1f1 a", "hyp1f1 b", "hyp2f1 c"])
def test_derivatives_without_a_rule_raise(f, message):
    with pytest.raises(TypeError, match=message):
        dualad.derivative(f)(2.5)


def test_values_only():
    x = np.array([-0.5, 1.5, -1.5])
    value, tangent = dualad.jvp(sc.gammasgn, (x,), (np.ones(3),))
    assert_array_equal(value, sc.gammasgn(x))
    assert_array_equal(tangent, 0.0)
    value, tangent = dualad.jvp(lambda k: sc.comb(7, k, exact=True), (np.float64(3.0),),
                                (np.float64(1.0),))
    assert value == sc.comb(7, 3, exact=True) == 35
    assert tangent == 0.0
    value, _ = dualad.jvp(lambda n: sc.factorial(n, exact=True), (np.array([3, 4]),),
                          (np.ones(2),))
    assert_array_equal(value, [6, 24])


def test_comb_and_factorial_outside_their_support_are_zero():
    value, tangent = dualad.jvp(lambda n, k: sc.comb(n, k), (np.array([3.0, -1.0, 4.0]),
                                                             np.array([4.0, 0.5, -0.5])),
                                (np.ones(3), np.ones(3)))
    assert_array_equal(value, sc.comb(np.array([3.0, -1.0, 4.0]), np.array([4.0, 0.5, -0.5])))
    assert_array_equal(tangent, 0.0)
    n = np.array([-1.5, 2.5, np.nan], np.float32)
    value, tangent = dualad.jvp(sc.factorial, (n,), (np.ones(3, np.float32),))
    assert_array_equal(value, sc.factorial(n))
    assert value.dtype == sc.factorial(n).dtype == np.float64
    assert tangent[0] == 0.0


@pytest.mark.parametrize("f, args", [
    (sc.fresnel, (np.array([-1.2, 0.4, 2.0]),)),
    (sc.sici, (np.array([0.3, 1.4, 5.0]),)),
    (sc.expn, (np.array([0.0, 1.0, 3.0]), np.array([0.4, 1.4, 2.0]))),
    (sc.boxcox, (np.array([0.4, 1.4, 2.0]), np.array([-0.7, 0.0, 1.3]))),
    (sc.boxcox1p, (np.array([-0.4, 1.4, 2.0]), np.array([-0.7, 0.0, 1.3]))),
    (sc.owens_t, (np.array([-0.4, 1.4, 2.0]), np.array([-0.7, 0.1, 1.3]))),
    (sc.spence, (np.array([0.4, 1.0, 2.0]),)),
    (lambda q: sc.zeta(3.5, q), (np.array([0.4, 1.4, 2.0]),)),
])
def test_values_are_scipys(f, args):
    tangents = tuple(np.ones_like(a) for a in args)
    value, _ = dualad.jvp(f, args, tangents)
    expected = f(*args)
    for v, e in zip(value if isinstance(value, tuple) else (value,),
                    expected if isinstance(expected, tuple) else (expected,)):
        assert_array_equal(v, e)


def test_boxcox_in_lambda_at_zero_and_spence_at_one():
    x = np.array([0.5, 2.0, 3.0])
    dl = dualad.jvp(lambda lm: sc.boxcox(x, lm), (np.zeros(3),), (np.ones(3),))[1]
    assert_allclose(dl, np.log(x) ** 2 / 2, rtol=1e-15)
    d2 = dualad.hessian(lambda lm: sc.boxcox(2.0, lm))(0.0)
    assert d2 == pytest.approx(np.log(2.0) ** 3 / 3, rel=1e-14)
    assert dualad.derivative(sc.spence)(1.0) == -1.0
    assert dualad.hessian(sc.spence)(1.0) == pytest.approx(0.5, rel=1e-15)


def test_exp1_and_expn_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.array([0.2, 0.9, 2.5, 6.0])
    assert_allclose(dualad.jacfwd(sc.exp1)(x).diagonal(),
                    jax.vmap(jax.grad(jax.scipy.special.exp1))(x), rtol=1e-12)
    for n in (1, 2, 5):
        assert_allclose(dualad.jacfwd(lambda x, n=n: sc.expn(n, x))(x).diagonal(),
                        jax.vmap(jax.grad(lambda x, n=n: jax.scipy.special.expn(n, x)))(x),
                        rtol=1e-12)


def test_dualad_gpu_gammainc_in_a():
    dualad_gpu = pytest.importorskip("dualad_gpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    f = lambda v: sc.gammainc(v[0], v[1]) + sc.gammaincc(0.5 * v[0], v[1])
    for v in (np.array([2.5, 3.0]), np.array([50.0, 49.0]), np.array([0.3, 20.0])):
        assert_allclose(dualad_gpu.grad(f)(v), dualad.grad(f)(v), rtol=1e-11)
        assert_allclose(dualad_gpu.hessian(f)(v), dualad.hessian(f)(v), rtol=1e-11)


def test_zeta_derivatives_match_mpmath():
    mpmath = pytest.importorskip("mpmath")
    for x, q in [(2.5, 0.3), (4.0, 1.7), (1.5, 3.0), (8.0, 0.6)]:
        grad = dualad.grad(lambda v: sc.zeta(v[0], v[1]))(np.array([x, q]))
        hess = dualad.hessian(lambda v: sc.zeta(v[0], v[1]))(np.array([x, q]))
        third = dualad.derivative(lambda x, q=q: dualad.hessian(
            lambda y: sc.zeta(y, q))(x))(x)
        with mpmath.mp.workdps(30):
            d = {o: float(mpmath.diff(mpmath.zeta, (x, q), o))
                 for o in [(1, 0), (0, 1), (2, 0), (1, 1), (0, 2)]}
            d3 = float(mpmath.zeta(x, q, 3))
        assert_allclose(grad, [d[1, 0], d[0, 1]], rtol=1e-13)
        assert_allclose(hess, [[d[2, 0], d[1, 1]], [d[1, 1], d[0, 2]]], rtol=1e-13)
        assert third == pytest.approx(d3, rel=1e-13)
    for x in (-7.3, -4.0, -2.5, -0.3, 0.0, 0.3, 2.5):  # Riemann's (reflected below 0)
        assert dualad.derivative(sc.zeta)(x) == pytest.approx(
            float(mpmath.zeta(x, 1, 1)), rel=1e-13)
        assert dualad.hessian(sc.zeta)(x) == pytest.approx(
            float(mpmath.zeta(x, 1, 2)), rel=1e-13)


GPU_CALLS = {
    "zeta": lambda v: sc.zeta(v[0] + 1.5, v[1]) + sc.zeta(v[0] + 2.0),
    "fresnel, sici": lambda v: np.sum(sum(sc.fresnel(v)) + sum(sc.sici(v + 0.5))),
    "comb, factorial": lambda v: sc.comb(v[0] + 4, v[1]) + sc.factorial(v[1]),
    "boxcox": lambda v: sc.boxcox(v[0] + 0.5, v[1]) + sc.boxcox1p(v[0], v[1]),
    "the others": lambda v: (
        sc.spence(v[0] + 0.2) + sc.expn(0, v[0] + 0.3) + sc.expn(2, v[1]) + sc.exp1(v[0])
        + sc.expi(v[1]) + sc.dawsn(v[0]) + sc.entr(v[0]) + sc.kl_div(v[0], v[1])
        + sc.rel_entr(v[1], v[0]) + sc.loggamma(v[1]) + sc.poch(v[0] + 0.5, v[1])
        + sc.owens_t(v[0], v[1]) + sc.hyp1f1(0.5, 1.5, v[0])
        + sc.hyp2f1(0.5, 1.5, 2.5, v[0] / 3) + sc.binom(v[1] + 3, v[0])
        + sc.gammasgn(v[0]) * v[1]),
}


@pytest.mark.parametrize("f", GPU_CALLS.values(), ids=GPU_CALLS.keys())
def test_dualad_gpu_gives_dualads_numbers(f):
    dualad_gpu = pytest.importorskip("dualad_gpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    v = np.array([0.7, 1.3])
    assert_allclose(dualad_gpu.grad(f)(v), dualad.grad(f)(v), rtol=1e-12)
    assert_allclose(dualad_gpu.hessian(f)(v), dualad.hessian(f)(v), rtol=1e-12, atol=1e-14)
