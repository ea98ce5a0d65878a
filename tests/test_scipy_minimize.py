"""scipy.optimize's minimisers and fits differentiated at their optimum
(dualad/solvers/scipy_minimize.py).

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
        warnings.simplefilter("ignore", UserWarning)  # (trust-constr: delta_grad == 0)
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


CONSTRAINED = ["SLSQP", "trust-constr", "COBYLA", "COBYQA"]


def _kkt_root(p, a, b):
    """The optimum of ``objective`` on the line x₀ + a·x₁ = b, with its multiplier,
    by Newton's method on the KKT conditions (no dualad)."""
    z = np.array([1.0, 0.0, 0.0])
    for _ in range(50):
        x, lam = z[:2], z[2]
        F = np.concatenate([2 * (x - p) + 0.4 * x ** 3 - lam * np.array([1.0, a]),
                            [x[0] + a * x[1] - b]])
        K = np.array([[2 + 1.2 * x[0] ** 2, 0.0, -1.0], [0.0, 2 + 1.2 * x[1] ** 2, -a],
                      [1.0, a, 0.0]])
        z = z - np.linalg.solve(K, F)
    return z


def _kkt_slope(theta):
    """dx*/dθ, θ = (p₀, p₁, a, b), by the implicit function theorem on the KKT
    conditions at :func:`_kkt_root` (derived by hand)."""
    p, a, b = theta[:2], theta[2], theta[3]
    x0, x1, lam = _kkt_root(p, a, b)
    K = np.array([[2 + 1.2 * x0 ** 2, 0.0, -1.0], [0.0, 2 + 1.2 * x1 ** 2, -a],
                  [1.0, a, 0.0]])
    dF = np.array([[-2.0, 0.0, 0.0, 0.0], [0.0, -2.0, -lam, 0.0], [0.0, 0.0, x1, -1.0]])
    return -np.linalg.solve(K, dF)[:2]


@pytest.mark.parametrize("method", CONSTRAINED)
def test_an_active_inequality_constraint_against_the_kkt_conditions(method):
    on_line = lambda p: _minimum(p, method, constraints=[
        {"type": "ineq", "fun": lambda x: 1 - x[0] - x[1]}]).x
    x = on_line(P)
    assert_allclose(x, _kkt_root(P, 1.0, 1.0)[:2], atol=1e-6)
    expected = _kkt_slope(np.array([*P, 1.0, 1.0]))[:, :2]
    assert_allclose(dualad.jacfwd(on_line)(P), expected, atol=1e-6)
    assert_allclose(dualad.jacrev(on_line)(P), expected, atol=1e-6)


def _on_moving_line(theta, method="SLSQP", form="nonlinear"):
    p, a, b = theta[:2], theta[2], theta[3]
    if form == "nonlinear":
        constraint = so.NonlinearConstraint(lambda x: x[0] + a * x[1], -np.inf, b)
    elif form == "linear":
        constraint = so.LinearConstraint(np.stack([np.ones_like(a), a])[None, :], -np.inf, b)
    else:  # the same as an equality, by a dict with args
        constraint = {"type": "eq", "fun": lambda x, a, b: x[0] + a * x[1] - b,
                      "args": (a, b)}
    return _minimum(p, method, constraints=constraint).x


@pytest.mark.parametrize("form", ["nonlinear", "linear", "dict"])
def test_a_constraint_holding_the_parameters_in_every_form(form):
    theta = np.array([2.0, 0.5, 1.0, 1.0])
    expected = _kkt_slope(theta)
    optimum = lambda t: _on_moving_line(t, form=form)
    # (SLSQP stops some 1e-7 from the exact optimum, where the derivative is taken)
    assert_allclose(dualad.jacfwd(optimum)(theta), expected, atol=1e-6)
    assert_allclose(dualad.jacrev(optimum)(theta), expected, atol=1e-6)
    h = 1e-5
    central = np.stack([(_kkt_slope(theta + h * e)[0] - _kkt_slope(theta - h * e)[0]) / (2 * h)
                        for e in np.eye(4)])
    assert_allclose(dualad.hessian(lambda t: _on_moving_line(t, form=form)[0])(theta),
                    central, atol=1e-6)


def test_constraints_and_bounds_together():
    # x₁ held at its bound 0.25, x₀ + x₁ = b moves x₀ alone.
    fit = lambda t: so.minimize(objective, np.zeros(2), args=(t[:2],), method="SLSQP",
                                tol=1e-12, bounds=[(None, None), (0.25, None)],
                                constraints={"type": "eq", "fun": lambda x: x[0] + x[1] - t[2]}).x
    theta = np.array([2.0, 0.5, 1.0])
    assert_allclose(fit(theta), [0.75, 0.25], atol=1e-9)
    assert_allclose(dualad.jacfwd(fit)(theta), [[0, 0, 1], [0, 0, 0]], atol=1e-9)


@pytest.mark.parametrize("method", ["trust-constr", "SLSQP", "L-BFGS-B"])
def test_bounds_bind_by_their_multipliers(method):
    # trust-constr stops near a bound, not on it: the bound still holds its component.
    at_one = lambda p: _minimum(p, method, bounds=[(None, p[1] + 0.5), (-5.0, 5.0)]).x
    x = at_one(P)
    assert_allclose(x[0], 1.0, atol=1e-7)
    assert_allclose(dualad.jacfwd(at_one)(P), [[0.0, 1.0], [0.0, slope(x[1])]], atol=1e-7)


def test_a_minimum_that_is_not_strict_has_no_derivative():
    flat = lambda p: so.minimize(lambda x: (x[0] - p[0]) ** 2 + 0 * x[1], np.zeros(2)).x
    with pytest.raises(TypeError, match="not strict"):
        dualad.jacfwd(flat)(np.array([1.0]))


def test_an_inactive_constraint_changes_nothing():
    loose = lambda p: _minimum(p, "SLSQP", constraints=[
        {"type": "ineq", "fun": lambda x: 10 - x[0] - x[1]}]).x
    x = loose(P)
    assert_allclose(dualad.jacfwd(loose)(P), np.diag(slope(x)), rtol=1e-8, atol=1e-10)


def test_dependent_active_constraints_have_no_derivative():
    twice = lambda p: _minimum(p, "SLSQP", constraints=[
        {"type": "ineq", "fun": lambda x: 1 - x[0]},
        {"type": "ineq", "fun": lambda x: 2 - 2 * x[0]}]).x
    assert_allclose(twice(P)[0], 1.0)
    with pytest.raises(TypeError, match="linearly dependent"):
        dualad.jacfwd(twice)(P)


def test_a_constrained_optimum_is_scipy_s_and_untouched_without_parameters():
    constrained = lambda p: so.minimize(objective, np.zeros(2), args=(p,), method="SLSQP",
                                        constraints=[{"type": "ineq",
                                                      "fun": lambda x: 1 - x[0]}])
    kept = []
    dualad.jacfwd(lambda p: kept.append(dualad.primal_value(constrained(p).x))
                  or constrained(p).x)(P)
    assert np.array_equal(kept[0], constrained(P).x)
    J = dualad.jacfwd(lambda p: p * constrained(P).x[1])(P)
    assert_allclose(J, np.eye(2) * constrained(P).x[1])


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
        # (no p0: SciPy counts the parameters of f, read through dualad's callback)
        "curve_fit, no p0": lambda y: so.curve_fit(lambda t, a, b: a + b * t, A[:, 1], y)[0],
        "curve_fit, no p0, closure": lambda y: so.curve_fit(
            lambda t, a, b: a + b * t + 0.0 * y[0], A[:, 1], y)[0],
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
    from dualad.solvers.scipy_minimize import _robust_cost

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


def _soft_l1(z):
    """SciPy's soft_l1 as a callable loss: (ρ, ρ′, ρ″), filled row by row."""
    rho = np.empty((3, z.size))
    t = 1 + z
    rho[0] = 2 * (t ** 0.5 - 1)
    rho[1] = t ** -0.5
    rho[2] = -0.5 * t ** -1.5
    return rho


def test_least_squares_callable_loss():
    fit = lambda y, loss, c=0.1: so.least_squares(
        lambda c: A @ c - y, np.zeros(2), loss=loss, f_scale=c, xtol=1e-15, ftol=1e-15,
        gtol=1e-15).x
    assert_allclose(dualad.jacfwd(lambda y: fit(y, _soft_l1))(Y),
                    dualad.jacfwd(lambda y: fit(y, "soft_l1"))(Y), atol=1e-10)
    # A loss closing over a parameter: ρ(z) = s·log1p(z/s), differentiated in s.
    scaled = lambda s: lambda z: np.stack([s * np.log1p(z / s), 1 / (1 + z / s),
                                           -1 / (s * (1 + z / s) ** 2)])
    at = lambda s: fit(Y, scaled(s), 1.0)
    h = 1e-5
    assert_allclose(dualad.derivative(at)(2.0), (at(2.0 + h) - at(2.0 - h)) / (2 * h),
                    atol=1e-6)


def test_least_squares_bounds_follow_the_active_mask():
    fit = lambda y: so.least_squares(lambda c: A @ c - y, np.array([0.0, 2.0]),
                                     bounds=([-np.inf, 1.05], [np.inf, np.inf]))
    result = fit(Y)
    assert list(result.active_mask) == [0, -1]
    J = dualad.jacfwd(lambda y: fit(y).x)(Y)
    # The slope is held at 1.05: the intercept is the mean of y − 1.05·t.
    assert_allclose(J, [[0.25] * 4, [0.0] * 4], atol=1e-13)


def test_curve_fit_bounds_hold_a_parameter_on_its_bound():
    line = lambda t, a, b: a + b * t
    keyword = lambda y: so.curve_fit(line, A[:, 1], y, p0=[0.0, 1.5],
                                     bounds=([-np.inf, 1.05], [np.inf, np.inf]))[0]
    positional = lambda y: so.curve_fit(line, A[:, 1], y, [0.0, 1.5], None, False, True,
                                        ([-np.inf, 1.05], [np.inf, np.inf]))[0]
    for fit in (keyword, positional):
        assert_allclose(fit(Y), [np.mean(Y - 1.05 * A[:, 1]), 1.05])
        # The slope is held at 1.05: the intercept is the mean of y − 1.05·t.
        for J in (dualad.jacfwd(fit)(Y), dualad.jacrev(fit)(Y)):
            assert_allclose(J, [[0.25] * 4, [0.0] * 4], atol=1e-12)
    # A bound that moves with the data moves the parameter.
    moving = lambda y: so.curve_fit(line, A[:, 1], y, p0=[0.0, 1.5],
                                    bounds=([-np.inf, y[0] + 0.95], [np.inf, np.inf]))[0]
    assert_allclose(dualad.jacfwd(moving)(Y),
                    [[0.25 - 1.5, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]], atol=1e-12)


def test_minimize_scalar_on_a_bound_follows_the_bound():
    at = lambda p: so.minimize_scalar(lambda x: (x - p[0]) ** 2 + 0.1 * x ** 4,
                                      bounds=(p[1], 5.0), method="bounded")
    assert abs(at(np.array([0.0, 1.0])).x - 1.0) < 1e-4
    assert_allclose(dualad.grad(lambda p: at(p).x)(np.array([0.0, 1.0])), [0.0, 1.0])
    # d min/dp: the envelope theorem with the bound active, ∂f/∂p₀ + f′(x*)·∂x*/∂p₁
    # (at SciPy's x, within its xatol of the bound).
    assert_allclose(dualad.grad(lambda p: at(p).fun)(np.array([0.0, 1.0])),
                    [-2.0, 2.0 + 0.4], rtol=1e-4)
    # Inside the bounds, the minimum of (x − p₀)² + x⁴/10: dx/dp₀ = 2/(2 + 1.2x²).
    x = at(np.array([2.0, 1.0])).x
    assert_allclose(dualad.grad(lambda p: at(p).x)(np.array([2.0, 1.0])), [slope(x), 0.0],
                    rtol=1e-4)


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr"])
def test_a_bounds_object_holding_a_parameter_with_an_equality(method):
    # Closest point to q on the plane Σx = 1 in the box [0, q₃]×[0, 1]×[0, 1]: x₀ sits on
    # its moving upper bound, x₂ on 0 (trust-constr stops about μ/λ inside them).
    def closest(q):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return so.minimize(lambda x: np.sum((x - q[:3]) ** 2), np.zeros(3), method=method,
                               constraints=[so.LinearConstraint(np.ones((1, 3)), 1.0, 1.0)],
                               bounds=so.Bounds([0, 0, 0], [q[3], 1, 1])).x
    q = np.array([0.9, 0.5, -0.2, 0.4])
    assert_allclose(closest(q), [0.4, 0.6, 0.0], atol=2e-4)
    expected = [[0, 0, 0, 1], [0, 0, 0, -1], [0, 0, 0, 0]]
    assert_allclose(dualad.jacfwd(closest)(q), expected, atol=1e-12)
    assert_allclose(dualad.jacrev(closest)(q), expected, atol=1e-12)


def test_least_squares_and_curve_fit_take_a_bounds_object():
    fit = lambda y: so.least_squares(lambda c: A @ c - y, np.array([0.0, 2.0]),
                                     bounds=so.Bounds([-np.inf, y[0] + 0.95], np.inf)).x
    assert_allclose(dualad.jacfwd(fit)(Y),
                    [[0.25 - 1.5, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]], atol=1e-12)
    fit = lambda y: so.curve_fit(lambda t, a, b: a + b * t, A[:, 1], y, p0=[0.0, 1.5],
                                 bounds=so.Bounds([-np.inf, y[0] + 0.95], np.inf))[0]
    assert_allclose(dualad.jacfwd(fit)(Y),
                    [[0.25 - 1.5, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]], atol=1e-12)


def test_rows_within_the_slack_alone_never_make_a_false_licq_error():
    # Bounded Brent's slack (2·xatol) around a bound at 1.0 and another at 1.0 + 1e-6:
    # both are candidates; they are dependent, and one of them binds.
    at = lambda p: so.minimize_scalar(lambda x: (x - p[0]) ** 2, method="bounded",
                                      bounds=(1.0, 5.0)).x
    from dualad.solvers.scipy_constraints import Constraints
    given = Constraints(())
    given.bound(np.array([1.0]), np.array([5.0]))
    given.bound(np.array([1.0 + 1e-6]), np.array([5.0]))
    active = given.active_at(lambda v: v[0] ** 2, np.array([at(np.array([0.0]))]),
                             "test", slack=1e-4)
    assert active is not None and len(active.rows) == 1


def test_a_sparse_linear_constraint_and_a_bound_broadcast_to_the_constraint():
    from scipy import sparse

    theta = np.array([1.0, 2.0, 1.0])
    linear = lambda t: so.minimize(
        lambda x: np.sum((x - t[:2]) ** 2), np.zeros(2), method="SLSQP", tol=1e-12,
        constraints=so.LinearConstraint(sparse.csr_array(np.ones((1, 2))), -np.inf, t[2])).x
    # The projection onto x₀ + x₁ ≤ t₂: x = p − (Σp − t₂)/2.
    assert_allclose(dualad.jacfwd(linear)(theta), [[0.5, -0.5, 0.5], [-0.5, 0.5, 0.5]],
                    atol=1e-12)
    # One upper bound for both components of g(x) = x: only x₁ reaches it.
    boxed = lambda t: so.minimize(
        lambda x: np.sum((x - t[:2]) ** 2), np.zeros(2), method="SLSQP", tol=1e-12,
        constraints=so.NonlinearConstraint(lambda x: x, [-np.inf], [t[2]])).x
    assert_allclose(dualad.jacfwd(boxed)(np.array([1.0, 2.0, 1.5])),
                    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], atol=1e-12)


# -- the active set from the solver's multipliers ----------------------------------------
#
# SLSQP's ``multipliers`` and trust-constr's ``v`` decide the active set where they exist;
# these problems are ones where the distance rule alone (on the bound within a relative
# 1e-6, widened by 100× trust-constr's barrier parameter) decides wrongly.

def _off_its_bound(result, g, bound):
    """How far g(x*) is from ``bound`` beyond what the distance rule calls on it."""
    from dualad.solvers.scipy_constraints import ACTIVE_TOLERANCE

    slack = 100 * getattr(result, "barrier_parameter", 0.0)
    return abs(g - bound) - ACTIVE_TOLERANCE * (1 + abs(bound)) - slack


#: (method, type, scale of the constraint, tol): the solver stops short of (or past) the
#: scaled circle s·(1 − x·x) ≥ 0 (= 0) by more than the distance rule allows, x* within
#: about 1e-5 of the exact p/|p|.
SHORT_OF_THE_CIRCLE = [("SLSQP", "ineq", 1e3, 1e-3), ("SLSQP", "eq", 1e3, 1e-3),
                       ("trust-constr", "ineq", 1e3, None), ("trust-constr", "eq", 1e4, 1e-3)]


@pytest.mark.parametrize("method, kind, scale, tol", SHORT_OF_THE_CIRCLE)
def test_a_constraint_off_its_bound_binds_by_the_solver_s_multiplier(method, kind, scale,
                                                                       tol):
    def closest(p):  # the closest point to p on (in) the unit circle: p/|p|
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return so.minimize(lambda x: np.sum((x - p) ** 2), np.zeros(2), method=method,
                               tol=tol, constraints={"type": kind,
                                                     "fun": lambda x: scale * (1 - x @ x)})
    result = closest(P)
    assert _off_its_bound(result, scale * (1 - result.x @ result.x), 0.0) > 0
    exact = lambda p: p / np.linalg.norm(p)
    expected = dualad.jacfwd(exact)(P)
    assert_allclose(dualad.jacfwd(lambda p: closest(p).x)(P), expected, atol=1e-4)
    assert_allclose(dualad.jacrev(lambda p: closest(p).x)(P), expected, atol=1e-4)
    assert_allclose(dualad.hessian(lambda p: closest(p).x[0])(P),
                    dualad.hessian(lambda p: exact(p)[0])(P), atol=1e-3)


def test_an_inactive_constraint_within_the_barrier_s_slack_changes_nothing():
    # x₀ + x₁ ≤ 2.81, in units of 1e-5: half a unit of x from the optimum (x₀ + x₁ ≈ 2.31),
    # but 1e-5 of g, within 100× trust-constr's barrier parameter. Its multiplier is
    # small against that distance: it does not bind.
    def loose(p):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return so.minimize(objective, np.zeros(2), args=(p,), method="trust-constr",
                               constraints=so.NonlinearConstraint(
                                   lambda x: 1e-5 * (x[0] + x[1]), -np.inf, 1e-5 * 2.81))
    result = loose(P)
    assert abs(result.constr[0][0] - 1e-5 * 2.81) < 100 * result.barrier_parameter
    assert abs(result.v[0][0]) > 1e-3  # (the barrier's, not zero)
    x = result.x
    for J in (dualad.jacfwd(lambda p: loose(p).x)(P), dualad.jacrev(lambda p: loose(p).x)(P)):
        assert_allclose(J, np.diag(slope(x)), atol=1e-6)
    expected = -4.8 * x[0] * slope(x[0]) / (2 + 1.2 * x[0] ** 2) ** 2
    assert_allclose(dualad.hessian(lambda p: loose(p).x[0])(P)[0, 0], expected, atol=1e-5)


def _mixed(p, method):
    """The closest point to p in R⁴ under a dict (x₀ ≤ 1), one NonlinearConstraint
    holding an equality (x₁ + x₂ = 0) and a two-sided inequality (−0.5 ≤ x₂ ≤ 0.2),
    a LinearConstraint (x₁ ≤ 0.3, inactive) and bounds (x₃ ≥ 0)."""
    constraints = [{"type": "ineq", "fun": lambda x: 1 - x[0]},
                   so.NonlinearConstraint(lambda x: np.stack([x[1] + x[2], x[2]]),
                                          [0.0, -0.5], [0.0, 0.2]),
                   so.LinearConstraint([[0.0, 1.0, 0.0, 0.0]], -np.inf, 0.3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (SLSQP: eq and ineq in one NonlinearConstraint)
        return so.minimize(lambda x: np.sum((x - p) ** 2), np.zeros(4), method=method,
                           tol=1e-10, constraints=constraints,
                           bounds=[(None, None)] * 3 + [(0.0, None)])


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr"])
def test_the_solver_s_multipliers_per_constraint_in_dualad_s_sign(method):
    from dualad.solvers.scipy_constraints import Constraints

    p = np.array([2.0, 0.5, 1.0, -1.0])
    result = _mixed(p, method)
    atol = 1e-6 if method == "SLSQP" else 1e-3  # (trust-constr stops 2e-4 inside)
    assert_allclose(result.x, [1.0, -0.2, 0.2, 0.0], atol=atol)
    constraints = Constraints([{"type": "ineq", "fun": lambda x: 1 - x[0]},
                               so.NonlinearConstraint(lambda x: np.stack([x[1] + x[2], x[2]]),
                                                      [0.0, -0.5], [0.0, 0.2]),
                               so.LinearConstraint([[0.0, 1.0, 0.0, 0.0]], -np.inf, 0.3)])
    constraints.bound(np.array([-np.inf] * 3 + [0.0]), np.full(4, np.inf))
    got = constraints.solver_multipliers(result, result.x)
    # ∇f = 2(x − p) = Σ λᵢ∇gᵢ: positive at a lower bound, negative at an upper one
    expected = [[2.0], [-1.4, -0.2], [0.0], [0.0, 0.0, 0.0, 2.0]]
    for lam, want in zip(got[:3], expected):
        assert_allclose(lam, want, atol=atol)
    if method == "SLSQP":
        assert got[3] is None  # (SLSQP returns none for the bounds)
    else:
        assert_allclose(got[3], expected[3], atol=atol)
    # Every component is held: x* does not move with p.
    assert_allclose(dualad.jacfwd(lambda p: _mixed(p, method).x)(p), np.zeros((4, 4)),
                    atol=1e-8)


@pytest.mark.parametrize("method, where", [("SLSQP", "constraint"), ("SLSQP", "bound"),
                                           ("trust-constr", "constraint"),
                                           ("trust-constr", "bound")])
def test_a_weakly_active_constraint_warns(method, where):
    # x₀ ≤ 2 where the unconstrained optimum is x₀ = 2: active with a zero multiplier.
    # The optimum moves as p₀ where p₀ falls, and stays where it rises.
    def weak(p):
        options = ({"constraints": {"type": "ineq", "fun": lambda x: 2.0 - x[0]}}
                   if where == "constraint" else {"bounds": [(None, 2.0), (None, None)]})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return so.minimize(lambda x: np.sum((x - p) ** 2), np.zeros(2), method=method,
                               tol=1e-12, **options).x
    with pytest.warns(RuntimeWarning, match="tightens or loosens"):
        J = dualad.jacfwd(weak)(np.array([2.0, 0.5]))
    sides = [np.eye(2), np.diag([0.0, 1.0])]  # loosening, tightening
    assert any(np.allclose(J, side, atol=1e-6) for side in sides)
