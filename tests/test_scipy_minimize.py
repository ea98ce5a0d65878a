"""scipy.optimize's minimisers and fits differentiated at their optimum
(dualad/rules/scipy_minimize.py).

Checked against closed forms (a separable objective whose optimum moves as
dx/dp = 2/(2 + 1.2x²), linear least squares whose solution is pinv(A)·y), and the
robust losses against central differences of an optimum polished by Newton's
method (SciPy's own iterations stop short of the precision differences need).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad

so = pytest.importorskip("scipy.optimize")

P = np.array([2.0, 0.5])
METHODS = ["BFGS", "Nelder-Mead", "Powell", "CG", "L-BFGS-B", "TNC", "trust-constr", "SLSQP",
           "COBYLA", "Newton-CG", "trust-exact", "dogleg", "trust-ncg", "trust-krylov"]


def objective(x, p):
    return np.sum((x - p) ** 2) + 0.1 * np.sum(x ** 4)


def slope(x):
    """dx*/dp of the objective's minimum, from 2(x − p) + 0.4x³ = 0."""
    return 2 / (2 + 1.2 * x ** 2)


def _minimum(p, method, **options):
    extra = {}
    if method in ("Newton-CG", "trust-exact", "dogleg", "trust-ncg", "trust-krylov"):
        extra = {"jac": dualad.grad(objective), "hess": dualad.hessian(objective)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (precision loss at tol=1e-12)
        return so.minimize(objective, np.zeros(2), args=(p,), method=method, tol=1e-12,
                           **extra, **options)


@pytest.mark.parametrize("method", METHODS)
def test_minimize_every_method_against_the_closed_form(method):
    x = _minimum(P, method).x
    J = dualad.jacfwd(lambda p: _minimum(p, method).x)(P)
    assert_allclose(J, np.diag(slope(x)), rtol=1e-12, atol=1e-15)
    assert_allclose(dualad.jacrev(lambda p: _minimum(p, method).x)(P), J, rtol=1e-12,
                    atol=1e-15)


def test_minimize_second_order_and_the_minimum_value():
    first = lambda p: _minimum(p, "BFGS").x[0]
    x = _minimum(P, "BFGS").x[0]
    # d/dp0 of 2/(2 + 1.2x²) along x' = slope(x): −4.8·x·x'/(2 + 1.2x²)²
    expected = -4.8 * x * slope(x) / (2 + 1.2 * x ** 2) ** 2
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(first, mode=mode)(P)[0, 0], expected, rtol=1e-10)
    # The minimum value moves as ∂f/∂p at x* (the envelope theorem), up to the
    # gradient SciPy's optimum leaves (about 1e-8 here).
    value = dualad.grad(lambda p: _minimum(p, "BFGS").fun)(P)
    xs = _minimum(P, "BFGS").x
    assert_allclose(value, -2 * (xs - P), rtol=1e-6)


def test_the_optimum_is_scipy_s_bit_for_bit():
    kept = []
    dualad.jacfwd(lambda p: kept.append(dualad.primal_value(_minimum(p, "BFGS").x)) or
                  _minimum(p, "BFGS").x)(P)
    assert np.array_equal(kept[0], _minimum(P, "BFGS").x)


def test_an_active_bound_holds_its_component():
    at_one = lambda p: _minimum(p, "L-BFGS-B", bounds=[(None, 1.0), (None, None)]).x
    x = at_one(P)
    assert x[0] == 1.0
    assert_allclose(dualad.jacfwd(at_one)(P), np.diag([0.0, slope(x[1])]), rtol=1e-12)
    moving = lambda p: _minimum(p, "L-BFGS-B", bounds=[(None, p[1] + 0.5), (None, None)]).x
    assert_allclose(dualad.jacfwd(moving)(P), [[0.0, 1.0], [0.0, slope(x[1])]], rtol=1e-12)


def test_constraints_are_not_differentiated_yet():
    constrained = lambda p: so.minimize(objective, np.zeros(2), args=(p,), method="SLSQP",
                                        constraints=[{"type": "ineq",
                                                      "fun": lambda x: 1 - x[0]}]).x
    with pytest.raises(TypeError, match="constrained minimum"):
        dualad.jacfwd(constrained)(P)
    # Nothing differentiated reaches it: SciPy's result.
    J = dualad.jacfwd(lambda p: p * constrained(P)[1])(P)
    assert_allclose(J, np.eye(2) * constrained(P)[1])


def test_minimize_scalar_against_the_closed_form():
    f = lambda p: so.minimize_scalar(lambda x: (x - p[0]) ** 2 + 0.1 * x ** 4 + p[1] * x,
                                     tol=1e-14)
    x = f(P).x
    denominator = 2 + 1.2 * x ** 2
    assert_allclose(dualad.jacfwd(lambda p: np.stack([f(p).x]))(P),
                    [[2 / denominator, -1 / denominator]], rtol=1e-10)
    assert_allclose(dualad.grad(lambda p: f(p).fun)(P), [-2 * (x - P[0]), x], rtol=1e-7)


A = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])
Y = np.array([0.1, 1.2, 1.9, 3.2])


def test_least_squares_and_curve_fit_of_a_line_are_the_pseudo_inverse():
    fits = {
        "least_squares": lambda y: so.least_squares(lambda c: A @ c - y, np.zeros(2)).x,
        "curve_fit": lambda y: so.curve_fit(lambda t, a, b: a + b * t, A[:, 1], y,
                                            p0=[0.0, 0.0])[0],
    }
    for fit in fits.values():
        assert_allclose(dualad.jacfwd(fit)(Y), np.linalg.pinv(A), atol=1e-13)
        assert_allclose(dualad.jacrev(fit)(Y), np.linalg.pinv(A), atol=1e-13)


def test_curve_fit_covariance_and_weights():
    def pcov_closed_form(y, sigma):
        W = np.diag(1 / sigma ** 2)
        c = np.linalg.solve(A.T @ W @ A, A.T @ W @ y)
        r = (A @ c - y) / sigma
        return np.linalg.inv(A.T @ W @ A) * (r @ r) / 2

    sigma = np.array([0.5, 1.0, 2.0, 1.0])
    fit = lambda y, s: so.curve_fit(lambda t, a, b: a + b * t, A[:, 1], y, p0=[0.0, 0.0],
                                    sigma=s)
    for argnums in (0, 1):
        got = dualad.jacfwd(lambda y, s: fit(y, s)[1], argnums=argnums)(Y, sigma)
        expected = dualad.jacfwd(pcov_closed_form, argnums=argnums)(Y, sigma)
        assert_allclose(got, expected, atol=1e-12)
    assert np.array_equal(dualad.primal_value(dualad.jvp(lambda y: fit(y, sigma)[1], (Y,),
                                                         (Y,))[0]), fit(Y, sigma)[1])


@pytest.mark.parametrize("loss", ["soft_l1", "huber", "cauchy", "arctan"])
def test_least_squares_robust_losses(loss):
    from dualad.rules.scipy_minimize import _robust_cost

    cost = _robust_cost(loss, 0.1)
    fit = lambda y: so.least_squares(lambda c: A @ c - y, np.zeros(2), loss=loss,
                                     f_scale=0.1, xtol=1e-15, ftol=1e-15, gtol=1e-15).x

    def polished(y):  # Newton's method on the cost's gradient, from SciPy's optimum
        c = fit(y)
        for _ in range(20):
            c = c - np.linalg.solve(dualad.hessian(lambda c: cost(A @ c - y))(c),
                                    dualad.grad(lambda c: cost(A @ c - y))(c))
        return c

    h = 1e-6
    central = np.stack([(polished(Y + h * e) - polished(Y - h * e)) / (2 * h)
                        for e in np.eye(4)], -1)
    assert_allclose(dualad.jacfwd(fit)(Y), central, atol=1e-8)


def test_least_squares_bounds_follow_the_active_mask():
    fit = lambda y: so.least_squares(lambda c: A @ c - y, np.array([0.0, 2.0]),
                                     bounds=([-np.inf, 1.05], [np.inf, np.inf]))
    result = fit(Y)
    assert list(result.active_mask) == [0, -1]
    J = dualad.jacfwd(lambda y: fit(y).x)(Y)
    # The slope is held at 1.05: the intercept is the mean of y − 1.05·t.
    assert_allclose(J, [[0.25] * 4, [0.0] * 4], atol=1e-13)
